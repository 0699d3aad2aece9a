"""A skill's scripts in any pydantic-ai workspace: its files copied there (`materialise`), a script found and run
within `ScriptLimits` (`script`, `limits`), and the Python package that provides a missing module (`distributions`).

Nothing here knows which workspace it is: `LocalWorkspace`, skillshelf's sandbox, a harness sandbox or a remote one.
"""

from .limits import ScriptLimits
from .script import ScriptResult

__all__ = ('ScriptLimits', 'ScriptResult')
