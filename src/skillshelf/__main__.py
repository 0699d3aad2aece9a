"""`python -m skillshelf`: the skillshelf command line."""

from skillshelf.authoring.cli import main

if __name__ == '__main__':
    main()
