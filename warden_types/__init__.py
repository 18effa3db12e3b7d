"""Plain data that the stores produce and the wire carries: the live feed's ``StoreEvent`` and the
audit chain's ``ChainReport``.

It imports no other Warden package (a contract says so), so the stores, the runtime, the server
and the client SDK all use the same classes, and the client never imports a store.
"""
