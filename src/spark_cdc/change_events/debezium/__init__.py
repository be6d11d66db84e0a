"""Debezium's change-event messages: the envelope (envelope), each connector family's position
(positions), the value encodings (types, decode), key-change pairing (pairing) and the
plain-Python model of all of them (model)."""
