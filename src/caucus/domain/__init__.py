"""Pure data and rules: dataclasses, enums and state transitions. No I/O, no asyncio."""
