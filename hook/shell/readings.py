"""What the shell interpreter (hook/shell/interpreter.py) can read of a command's data: files written
earlier in the same command or on disk, what a command reads on stdin when the text shows it, and what
echo/printf/cat and the decoders print. Split from the interpreter to keep each module small."""

from __future__ import annotations

from hook.shell import paths
from hook.shell.expansion import Expansion
from hook.shell.syntax import DYN, Command, Event

_MAX_FILE_BYTES = 1 << 20


class Readings(Expansion):
    files: dict[str, str]  # path -> text written earlier in this command
    functions: dict[str, list[Event]]
    decoded: set[str]  # texts a decoder produced here (seen through, still suspect)

    def path(self, name: str, cwd: str | None = None) -> str:
        base = cwd or self.cwd
        if DYN in name or paths.isabs(name) or not base:
            return name
        return paths.normpath(paths.join(base, name))

    def read_file(self, name: str) -> str | None:
        """A file's text: one written earlier in this command, else the disk (relative to cwd)."""
        key = self.path(name)
        if key in self.files:
            return self.files[key]
        if DYN in key or not paths.isabs(key):
            return None
        if key.startswith(("/dev/", "/proc/")):  # the hook's own descriptors, not the command's
            return "" if key == "/dev/null" else None
        try:
            with open(key, encoding="utf-8", errors="replace") as handle:
                return handle.read(_MAX_FILE_BYTES)
        except OSError:
            return None

    # --- what commands print and read ----------------------------------------------------------
    def stdin_text(self, cmd: Command) -> str | None:
        """What the command reads on stdin, when the text shows it (heredoc, here-string, a pipe from
        echo/printf/cat, a file written earlier); None when unknown."""
        for red in cmd.redirects:
            if red.op in ("<<", "<<-") and red.body is not None:
                return self.expand_one(red.body)
            if red.op == "<<<" and red.target is not None:
                return self.expand_one(red.target) + "\n"
            if red.op == "<" and red.target is not None:
                return self.read_file(self.expand_one(red.target))
        if cmd.piped and cmd.pipe_src is not None:
            return self.output_of(cmd.pipe_src)
        return None

    def output_of(self, cmd: Command) -> str | None:
        """What echo, printf or cat prints; None for any other program."""
        args = [text for text, _ in self.expand(cmd.words)]
        if not args:
            return None
        name = args[0].rsplit("/", 1)[-1]
        if name in self.functions:  # `echo() { …; }`: a function of that name runs instead
            return None
        if name == "echo":
            words, newline, escapes = args[1:], "\n", False
            while words and len(words[0]) > 1 and words[0][0] == "-" and set(words[0][1:]) <= set("neE"):
                newline = "" if "n" in words[0] else newline
                escapes = "e" in words[0] if set(words[0][1:]) & set("eE") else escapes
                words = words[1:]
            text = " ".join(words)
            return None if escapes and "\\" in text else text + newline
        if name == "printf" and len(args) > 1:
            from hook.shell.builtins import printf

            return None if args[1] == "-v" else printf(args[1], args[2:])
        if name == "cat":
            files = [a for a in args[1:] if not a.startswith("-")]
            if not files:
                return self.stdin_text(cmd)
            texts = [self.read_file(f) for f in files]
            return None if any(t is None for t in texts) else "".join(t or "" for t in texts)
        if name in ("base64", "rev", "xxd"):
            source = self.stdin_text(cmd)
            from hook.shell.builtins import decode

            decoded = decode(name, args[1:], source) if source is not None and DYN not in source else None
            if decoded is not None:
                self.decoded.add(decoded)
            return decoded
        return None

    def substitution_output(self, inner: list[Event]) -> str | None:
        """What ``$(echo … | base64 -d)`` prints, when it is a pipeline of printing and decoding commands."""
        commands = [e for e in inner if isinstance(e, Command)]
        if not commands or any(not c.piped or c.pipe_src is not commands[k] for k, c in enumerate(commands[1:])):
            return None
        text = self.output_of(commands[-1])
        return None if text is None else text.rstrip("\n")
