"""Test helpers shipped with chapyter-ext: a loopback OpenAI-compatible server."""
