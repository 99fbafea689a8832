"""Cryptography operations: hash, cipher (AES-CBC/GCM), MAC (HMAC), random — keys named in resources.keys."""
