"""The firmware domain: target facts, typed plans, obligations, lowering, verification, backends."""
