"""SGLang's own text: server logs, scheduler lines, errors, and the server_args dump."""
