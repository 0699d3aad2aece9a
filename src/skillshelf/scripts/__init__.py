"""Running the scripts bundled with skills: the runner contract and the two built-in runners."""

from .bubblewrap import BubblewrapRunner
from .local import LocalRunner
from .runner import ScriptLimits, ScriptRequest, ScriptResult, ScriptRunner

__all__ = ('BubblewrapRunner', 'LocalRunner', 'ScriptLimits', 'ScriptRequest', 'ScriptResult', 'ScriptRunner')
