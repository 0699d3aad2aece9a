"""The reliability ledger: attack and fault tests record what they tried and what happened, for `docs/reliability.md`."""
