"""What pydantic-ai sees: the `Skills` capability, its meta-tools, and the per-run state derived from history."""
