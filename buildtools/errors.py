"""The one exception build.py reports to a person."""


class BuildError(Exception):
    """A build step failed. `what` says what happened, `todo` what to do about it.

    build.py prints both and exits non-zero; nothing else is needed to understand the failure,
    so messages name the artifact, the file or the command involved.
    """

    def __init__(self, what, todo=""):
        super().__init__(what)
        self.what = what
        self.todo = todo

    def __str__(self):
        return self.what + ("\n  what to do: " + self.todo if self.todo else "")
