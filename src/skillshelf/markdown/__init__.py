"""Reading `SKILL.md`: bounded reads, the one guarded YAML parser, the frontmatter model, lenient repairs."""
