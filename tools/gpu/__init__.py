"""The GPU a server ran on, and SGLang's GPU-architecture guards decided for it."""
