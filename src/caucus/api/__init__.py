"""The HTTP transport: parse, call one service method, format."""
