"""Writing and comparing lock files for `skillshelf lock` and `skillshelf diff` (the runtime check is the core's `lock/`)."""
