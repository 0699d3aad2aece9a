"""The authoring annex: what skill authors use and agents never need at run time.

`cli` is the `skillshelf` command line (the `cli` extra: `pip install "skillshelf[cli]"`), `lint` checks `SKILL.md`
folders against the Agent Skills format, and `needs` finds what a skill's scripts need from the environment
(`skillshelf check`). The skills core never imports this package.
"""
