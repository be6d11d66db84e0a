"""Debezium's change-event messages: the envelope (envelope), each connector family's position
(positions), the value encodings (types, decode) and the plain-Python model of them (model).
A key change's two messages are paired by the resolver (change_events.key_changes)."""
