__version__ = "0.5.23.lab"
