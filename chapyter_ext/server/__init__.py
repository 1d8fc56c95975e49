"""The server half of chapyter-ext: the chat sidebar's HTTP API (see :mod:`.app`)."""
