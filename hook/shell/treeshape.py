"""Where tree-sitter-bash's tree is not bash's grammar, for hook/shell/treesitter.py: found by
tests/test_hook_frontends.py reading the same programs with both readers, each confirmed with real bash.

- The redirections of a list's last command hang on the whole list (``a && b >f`` is
  ``redirected_statement(list, >f)``), which even turns ``a && b 2>&1 | c`` into a pipeline of a list;
  what follows a here-document's start stays inside its node (``cat <<EOF | bash``). `flatten` reads an
  and-or list as the commands and operators it holds, each redirection on the command before it.
- A second here-document of a line nests inside the first one's node and gets the first body
  (``cat <<A | bash <<B``): `heredoc_body` pairs bodies with their ``<<`` in order, as bash reads them.
- A lone ``-`` before a redirection is left out of the tree (``gh pr comment 5 -F - <<EOF``): `dropped`;
  the words after a redirection's target are held in the redirection (``gh pr merge >/dev/null 5``):
  `trailing`; the variable of ``{fd}>f`` is read as the command's last word: `fd_variable`.
- A command may run on past a newline without an error node (``v=5 | echo x | bash`` NEWLINE ``elif …``
  made ``elif`` an argument of bash), and a here-document's body may be taken from later lines while its
  own lines are read as code (``cat <<EOF && case …``); ``! {`` makes ``{`` a command's name: `one_line`,
  `check_heredocs` and `not_a_keyword` raise `Misread`, and the text counts as unread.

Works on the tree only; imports nothing at run time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tree_sitter import Node

AND_OR = ("list", "pipeline", "negated_command", "redirected_statement")
_REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_HEREDOC_PARTS = ("<<", "<<-", "heredoc_start", "heredoc_body", "heredoc_end")
_OPERATORS = ("&&", "||", "|", "|&")
_RESERVED = (b"{", b"}", b"if", b"then", b"elif", b"else", b"fi", b"do", b"done", b"case", b"esac", b"while",
             b"until", b"for", b"select", b"function")
_WORDS = ("word", "number", "string", "raw_string", "concatenation", "simple_expansion", "expansion",
          "command_substitution", "ansi_c_string", "translated_string", "arithmetic_expansion",
          "process_substitution")


class Misread(Exception):
    """A tree without error nodes that bash cannot have meant."""


def flatten(node: Node) -> tuple[list[tuple[Node, list[Node]]], list[str]]:
    """An and-or list (a pipeline, a redirected statement…) as its commands, each with the redirection
    nodes that belong to it, and the operators between them (``&&``, ``||``, ``|``, ``|&``)."""
    elements: list[tuple[Node, list[Node]]] = []
    ops: list[str] = []
    _flatten(node, elements, ops)
    return elements, ops


def _flatten(node: Node, elements: list[tuple[Node, list[Node]]], ops: list[str]) -> None:
    if node.type in ("list", "pipeline", "negated_command"):
        _tokens(node.children, elements, ops)
    elif node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is not None and body.type in AND_OR:
            _flatten(body, elements, ops)
        else:  # a command, a compound, or nothing at all (`>f` empties f)
            elements.append((body or node, []))
        for child in node.children_by_field_name("redirect"):
            _attach(child, elements, ops)
    else:
        elements.append((node, []))


def _tokens(children: list[Node], elements: list[tuple[Node, list[Node]]], ops: list[str]) -> None:
    for child in children:
        if child.type in _OPERATORS:
            ops.append(child.type)
        elif child.type in _REDIRECTS:
            _attach(child, elements, ops)
        elif child.is_named and child.type != "comment":
            _flatten(child, elements, ops)


def _attach(redirect: Node, elements: list[tuple[Node, list[Node]]], ops: list[str]) -> None:
    """A redirection belongs to the command before it; the rest of a here-document's line follows it."""
    if elements:
        elements[-1][1].append(redirect)
    if redirect.type == "heredoc_redirect":
        arguments = {c.id for c in trailing(redirect)}  # the command's, read with it
        _tokens([c for c in redirect.children if c.type not in _HEREDOC_PARTS and c.id not in arguments], elements,
                ops)


def heredoc_body(node: Node) -> Node | None:
    """The body bash reads for a here-document: bodies follow in the order of the ``<<`` opening them."""
    own = next((c for c in node.children if c.type == "heredoc_body"), None)
    root, nested = node, _has_heredoc(node)
    while root.parent is not None:
        root = root.parent
        nested = nested or root.type == "heredoc_redirect"
    if not nested:
        return own
    heredocs: list[Node] = []
    bodies: list[Node] = []
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == "heredoc_redirect":
            heredocs.append(current)
        elif current.type == "heredoc_body":
            bodies.append(current)
        stack.extend(current.children)
    if len(heredocs) != len(bodies):
        return own
    heredocs.sort(key=lambda n: n.start_byte)
    bodies.sort(key=lambda n: n.start_byte)
    return next((b for h, b in zip(heredocs, bodies, strict=True) if h.id == node.id), own)


def check_heredocs(root: Node) -> None:
    """A here-document's body starts on the line after its ``<<``: when the tree has commands there
    instead (a body taken from later lines, ``cat <<EOF && case …`` read the body as code), `Misread`."""
    leaves: list[Node] = []
    heredocs: list[Node] = []
    bodies: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_redirect":
            heredocs.append(node)
        elif node.type == "heredoc_body":
            bodies.append((node.start_byte, node.end_byte))
        if node.child_count == 0:
            leaves.append(node)
        stack.extend(node.children)
    if not heredocs:
        return
    text = root.text or b""
    leaves.sort(key=lambda n: n.start_byte)
    for heredoc in heredocs:
        start = next((c for c in heredoc.children if c.type == "heredoc_start"), None)
        body = heredoc_body(heredoc)
        if start is None or body is None:
            continue
        line_end = _line_end(text, start.end_byte - root.start_byte, leaves, root.start_byte)
        for leaf in leaves:
            at = leaf.start_byte
            if line_end <= at < body.start_byte and leaf.type not in _HEREDOC_PARTS and not any(
                    b <= at < e for b, e in bodies):
                raise Misread


def _line_end(text: bytes, at: int, leaves: list[Node], base: int) -> int:
    """The end of the line a position is on: its first newline outside a token (a quoted string)."""
    while True:
        at = text.find(b"\n", at)
        if at < 0:
            return len(text) + base
        inside = next((leaf for leaf in leaves if leaf.start_byte <= at + base < leaf.end_byte), None)
        if inside is None:
            return at + base
        at = inside.end_byte - base


def _has_heredoc(node: Node) -> bool:
    return any(c.type == "heredoc_redirect" or _has_heredoc(c) for c in node.children)


def dropped(command: Node, first: Node) -> list[str]:
    """The words left out of the tree between a command and its first redirection."""
    holder = first.parent  # the redirected statement, which spans both
    if holder is None or holder.start_byte > command.start_byte or first.start_byte < command.end_byte:
        return []
    text = (holder.text or b"")[command.end_byte - holder.start_byte : first.start_byte - holder.start_byte]
    return text.decode("utf-8", "replace").replace("\\\n", " ").split()


def fd_variable(word: Node | None, following: Node | None) -> bool:
    """``{fd}>/dev/null`` names the variable that gets the descriptor; tree-sitter-bash reads ``{fd}`` as
    a word of what comes before (the command's last word, or one after an earlier redirection's target)."""
    if word is None or following is None or word.end_byte != following.start_byte or word.type.endswith("_redirect"):
        return False
    name = (word.text or b"").decode("utf-8", "replace")
    return name.startswith("{") and name.endswith("}") and name[1:-1].isidentifier() and name[1:-1].isascii()


def trailing(redirect: Node) -> list[Node]:
    """The words after a redirection's target: the command's own arguments (``gh pr merge >/dev/null 5``
    puts ``5`` in the ``file_redirect`` node, ``gh pr merge 5 <<EOF -R acme/other`` puts ``-R acme/other``
    in the ``heredoc_redirect``), on the redirection's line."""
    if redirect.type == "heredoc_redirect":
        words: list[Node] = []
        for child in redirect.children[_start(redirect) + 1:]:
            if child.type not in _WORDS:  # `|`, `&&`, a redirection: the rest of the line follows
                break
            words.append(child)
        return words
    if redirect.type != "file_redirect":
        return []
    one_line(redirect)
    words = [c for c in redirect.named_children if c.type not in ("file_descriptor", "comment")][1:]
    return words[:-1] if words and fd_variable(words[-1], redirect.next_sibling) else words


def _start(heredoc: Node) -> int:
    return next((k for k, c in enumerate(heredoc.children) if c.type == "heredoc_start"), len(heredoc.children))


def not_a_keyword(command: Node) -> None:
    """A reserved word first in a command is bash's keyword, never a program's name: tree-sitter-bash reads
    ``! { gh pr merge 5; }`` as a command named ``{`` and one named ``}`` (``! if …``: ``if``, ``then``)."""
    first = command.children[0] if command.children else None
    if first is not None and first.type == "command_name" and (first.text or b"") in _RESERVED:
        raise Misread


def one_line(node: Node) -> None:
    """A simple command ends at a newline (outside quotes and line continuations), in the gaps between
    its words and inside an unquoted word too: tree-sitter-bash reads ``true`` NEWLINE ``\\gh pr merge 5``
    as one command whose second word is NEWLINE ``\\gh``, and ``gh pr mer\\`` NEWLINE ``ge 5`` as
    ``gh pr mer ge 5``."""
    text, children = node.text or b"", node.children
    for k in range(1, len(children)):
        gap = text[children[k - 1].end_byte - node.start_byte : children[k].start_byte - node.start_byte]
        # a gap of line continuations alone joins two words in bash (`mer\` NEWLINE `ge` is `merge`);
        # tree-sitter-bash splits them
        if b"\n" in gap.replace(b"\\\n", b"") or (gap and not gap.replace(b"\\\n", b"")):
            raise Misread
    _bare_words(children)


def _bare_words(children: list[Node]) -> None:
    """A newline in an unquoted word (not a quoted string's, not an escaped one) ends the command."""
    for child in children:
        if child.type == "word" and b"\n" in (child.text or b"").replace(b"\\\n", b""):
            raise Misread
        if child.type in ("command_name", "concatenation"):
            _bare_words(child.children)
