"""The slow path: tree-sitter-bash for what hook/shell/parser.py does not model (function
definitions, extglob ``case`` patterns, ``coproc``, unbalanced or foreign text). Imported only then:
loading tree-sitter costs about twice the interpreter's start-up (design §7).

The tree gives the structure, corrected where tree-sitter-bash's grammar is not bash's
(hook/shell/treeshape.py); each word's text is still read by the fast lexer, so quoting means the
same on both paths, and where a compound's input and output go is hook/shell/streams.py's, as on the
fast path. The caller treats a tree with errors as incomplete and flags merge-looking text
undetermined rather than trusting it.
"""

from __future__ import annotations

from hook.shell import streams, treeshape
from hook.shell.lexer import assigned_names, names_in
from hook.shell.parser import parse, read_word
from hook.shell.syntax import (
    LOOP_END,
    LOOP_START,
    MAYBE_END,
    MAYBE_START,
    Case,
    Command,
    Event,
    ForLoop,
    FunctionDef,
    Part,
    Redirect,
    Unsupported,
    Word,
    subshell,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tree_sitter import Node

_SUBSTITUTIONS = ("command_substitution", "process_substitution")
_COMPOUNDS = ("subshell", "compound_statement", "if_statement", "while_statement", "for_statement",
              "c_style_for_statement", "case_statement", "function_definition")


def parse_bash(text: str) -> tuple[list[Event], bool]:
    """``(events, complete)``: complete is False when the tree holds syntax errors."""
    import tree_sitter
    import tree_sitter_bash

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    out: list[Event] = []
    try:
        if "<<" in text:
            treeshape.check_heredocs(tree.root_node)
        _statement(tree.root_node, out)
    except treeshape.Misread:
        return out, False
    return out, not tree.root_node.has_error


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _statement(node: Node, out: list[Event]) -> None:
    kind = node.type
    if kind == "command":
        out.append(_command(node, [], out))
    elif kind in treeshape.AND_OR:
        _and_or(node, out)
    elif kind == "test_command":  # `[ … ]`, `[[ … ]]`: read by the fast reader, as on the fast path
        _reread(node, out)
    elif kind == "variable_assignment" and _is_array(node):
        out.append(Command([], [], [], [_array(node, out)]))
    elif kind == "variable_assignment":
        out.append(Command([], [_assignment(node, out)], []))
    elif kind == "variable_assignments":
        out.append(Command([], [_assignment(c, out) for c in node.named_children], []))
    elif kind in ("declaration_command", "unset_command"):
        words = [Word([Part("l", _text(node.children[0]), False)], _text(node.children[0]))]
        words += [_word(c, out) for c in node.named_children]
        out.append(Command(words, [], []))
        # `declare -a a=(…)` assigns the array too; with -i/-l/-u/-A/-n what is stored differs from
        # what is written, so the array is unknown (hook/shell/builtins.py says the same of scalars).
        letters = {c for w in words[1:] if w.raw.startswith(("-", "+")) for c in w.raw[1:]}
        for child in node.named_children:
            if child.type == "variable_assignment" and _is_array(child):
                name, elements = _array(child, out)
                exact = not letters - {"a", "g", "x", "r", "p", "f", "F"}
                out.append(Command([], [], [], [(name, elements if exact else None)]))
    elif kind in ("subshell", *_SUBSTITUTIONS):
        out.append("(")
        _body(node.children, out)
        out.append(")")
    elif kind == "for_statement":
        variable = node.child_by_field_name("variable")
        name = _text(variable) if variable is not None else ""
        out.append(Command([], [(name, Word([Part("d", "", False)], "$" + name))], []))
        values = [_word(child, out) for child in node.children_by_field_name("value")]
        body = node.child_by_field_name("body")
        plain = any(c.type == "in" for c in node.children) and not any(c.type == "select" for c in node.children)
        out.append(ForLoop(name, values if plain else None))
        if body is not None:
            _statement(body, out)
        out.append(LOOP_END)
    elif kind in ("while_statement", "c_style_for_statement"):
        if kind == "c_style_for_statement":
            for name in names_in(_text(node).split("do", 1)[0]):
                out.append(Command([], [(name, Word([Part("d", "", False)], "$" + name))], []))
        out.append(LOOP_START)
        _body(node.children, out)
        out.append(LOOP_END)
    elif kind == "compound_statement" and _text(node).startswith("(("):  # ((x++)): arithmetic
        for name in assigned_names(_text(node)[2:-2]):
            out.append(Command([], [(name, Word([Part("d", "", False)], "$" + name))], []))
        _substitutions(node, out)
    elif kind == "case_statement":  # the arms are decided in hook/shell/cases.py, as on the fast path
        subject = node.child_by_field_name("value")
        arms: list[tuple[list[Word], list[Event], str]] = []
        for item in node.named_children:
            if item.type != "case_item":
                continue
            pattern_nodes = item.children_by_field_name("value")
            patterns = [_word(c, out) for c in pattern_nodes]
            ids = {c.id for c in pattern_nodes}
            arm: list[Event] = []
            _body([c for c in item.children if c.id not in ids], arm)
            term = next((c.type for c in item.children if c.type in (";;", ";&", ";;&")), ";;")
            arms.append((patterns, arm, term))
        out.append(Case(_word(subject, out) if subject is not None else Word([], ""), arms))
    elif kind == "function_definition":
        named = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        events: list[Event] = []
        if body is not None:
            _statement(body, events)
        out.append(FunctionDef(_text(named) if named is not None else "", events))
    elif kind == "if_statement":  # each branch may not run
        region: list[Node] = []  # the condition, then the `then` branch
        branch = False
        for child in node.children:
            if child.type in ("then", "elif_clause", "else_clause", "fi"):
                _body(region, out)
                region = []
                out.extend([MAYBE_END] if branch else [])
                branch = False
            if child.type == "then":
                out.append(MAYBE_START)
                branch = True
            elif child.type in ("elif_clause", "else_clause"):
                out.append(MAYBE_START)
                _body(child.children, out)
                out.append(MAYBE_END)
            elif child.type != "fi":
                region.append(child)
        _body(region, out)
        out.extend([MAYBE_END] if branch else [])
    elif kind != "comment":
        _body(node.children, out)


def _body(children: list[Node], out: list[Event]) -> None:
    """The statements of a list, a group or a compound's body; ``f &``: a background job runs in a subshell."""
    start = None
    for child in children:
        if child.type == "&" and start is not None:
            subshell(out, start)
        elif child.is_named:
            start = len(out)
            _statement(child, out)


def _command(node: Node, redirects: list[Redirect], out: list[Event]) -> Command:
    treeshape.one_line(node)
    treeshape.not_a_keyword(node)
    words: list[Word] = []
    assigns: list[tuple[str, Word]] = []
    arrays: list[tuple[str, list[Word] | None]] = []
    for child in node.named_children:
        if child.type == "variable_assignment" and _is_array(child):
            arrays.append(_array(child, out))
        elif child.type == "variable_assignment":
            assigns.append(_assignment(child, out))
        elif child.type == "command_name":
            words.append(_word(child.named_children[0] if child.named_children else child, out))
        elif child.type.endswith("_redirect"):
            redirects.append(_redirect(child, out))
            words += [_word(w, out) for w in treeshape.trailing(child)]
        elif child.type != "comment":
            words.append(_word(child, out))
    return Command(words, assigns, redirects, arrays)


def _and_or(node: Node, out: list[Event]) -> None:
    """An and-or list of pipelines, grouped as bash groups it. tree-sitter-bash hangs the redirections
    of a list's last command on the whole list (``a && b >f`` is ``redirected_statement(list, >f)``),
    which even turns ``a && b 2>&1 | c`` into a pipeline of a list, and keeps what follows a
    here-document inside its node (``cat <<EOF | bash``). So the tree is read as the commands and
    operators it holds, each redirection on the command before it, and regrouped: pipelines bind
    tighter than ``&&``/``||``, after which the rest of the list may not run (hook/shell/cases.join)."""
    elements, ops = treeshape.flatten(node)
    pipeline: list[tuple[Node, list[Node]]] = []
    maybes = 0
    for k, element in enumerate(elements):
        op = ops[k - 1] if 0 < k <= len(ops) else ";"
        if k and op not in ("|", "|&"):
            _pipeline(pipeline, out)
            pipeline = []
            if op in ("&&", "||"):
                out.append(MAYBE_START)
                maybes += 1
        pipeline.append(element)
    _pipeline(pipeline, out)
    out.extend([MAYBE_END] * maybes)


def _pipeline(parts: list[tuple[Node, list[Node]]], out: list[Event]) -> None:
    """``a | { b; } | c``: each part runs in a subshell and reads what the one before it prints."""
    if len(parts) == 1:
        _element(*parts[0], out)
        return
    source: Command | None = None
    for k, (node, redirect_nodes) in enumerate(parts):
        start = len(out)
        out.append("(")
        command, redirects = _element(node, redirect_nodes, out)
        out.append(")")
        if k and command is not None:
            command.piped, command.pipe_src = True, source
        elif k:
            streams.feed(out, start, source)
        prints = node.type in _COMPOUNDS and not _text(node).startswith("((")  # not `((…))`, `[[ … ]]`
        source = command if command is not None else streams.output(out[start:], redirects) if prints else None


def _element(node: Node, redirect_nodes: list[Node], out: list[Event]) -> tuple[Command | None, list[Redirect]]:
    """One command of a pipeline with its redirections (their substitutions run first); the simple
    command it is, if it is one."""
    redirects = [_redirect(r, out) for r in redirect_nodes]
    if node.type == "redirected_statement":  # redirections alone
        command = Command([], [], redirects)
        out.append(command)
        return command, redirects
    if node.type == "command":
        command = _command(node, redirects, out)
        final = node.named_children[-1] if node.named_children else None
        if redirect_nodes and treeshape.fd_variable(final, redirect_nodes[0]) and command.words:
            command.words.pop()
        if redirect_nodes:
            command.words += [_lex(None, w, out, whole_text=False) for w in treeshape.dropped(node, redirect_nodes[0])]
        command.words += [_word(w, out) for r in redirect_nodes for w in treeshape.trailing(r)]
        out.append(command)
        return command, redirects
    if any(treeshape.trailing(r) for r in redirect_nodes):  # `{ …; } >f 5`: not bash
        raise treeshape.Misread
    start = len(out)
    _statement(node, out)
    last = out[-1] if len(out) > start else None
    if node.type not in _COMPOUNDS and isinstance(last, Command):  # `v=$(…)`, `export v`: a simple command
        last.redirects += redirects
        return last, redirects
    if redirects:
        streams.redirect(out, start, redirects)
    return None, redirects


def _reread(node: Node, out: list[Event]) -> None:
    """Text the fast reader models (a test command): its events, so that both paths read it alike."""
    try:
        out.extend(parse(_text(node)))
    except Unsupported:
        _substitutions(node, out)


def _redirect(node: Node, out: list[Event]) -> Redirect:
    if node.type == "heredoc_redirect":
        op = "<<-" if any(c.type == "<<-" for c in node.children) else "<<"
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        quoted = start is not None and any(q in _text(start) for q in "'\"\\")
        red = Redirect(op, None, quoted=quoted)
        body_node = treeshape.heredoc_body(node)
        body = _text(body_node) if body_node is not None else ""
        if quoted:
            red.body = Word([Part("l", body, True)], body)
        else:
            red.body = _lex(body_node, body, out, whole_text=True)
        return red
    words = [c for c in node.named_children if c.type not in ("file_descriptor", "comment")]
    op = next((_text(c) for c in node.children if not c.is_named), ">")
    return Redirect(op, _word(words[0], out) if words else None)  # what follows: `treeshape.trailing`


def _is_array(node: Node) -> bool:
    value = node.child_by_field_name("value")
    return value is not None and value.type == "array"


def _array(node: Node, out: list[Event]) -> tuple[str, list[Word] | None]:
    name, _ = _assignment_name(node)
    value = node.child_by_field_name("value")
    elements = [c for c in value.named_children if c.type != "comment"] if value is not None else []
    if any(_text(c).startswith("[") for c in elements):
        return name, None
    return name, [_word(c, out) for c in elements]


def _assignment_name(node: Node) -> tuple[str, bool]:
    name = node.child_by_field_name("name")
    appends = any(c.type == "+=" for c in node.children)
    return (_text(name) if name is not None else "") + ("+" if appends else ""), appends


def _assignment(node: Node, out: list[Event]) -> tuple[str, Word]:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    appends = any(c.type == "+=" for c in node.children)  # NAME+=value (hook/shell/interpreter.py)
    return ((_text(name) if name is not None else "") + ("+" if appends else ""),
            _word(value, out) if value is not None else Word([], ""))


def _word(node: Node, out: list[Event]) -> Word:
    return _lex(node, _text(node), out, whole_text=False)


def _lex(node: Node | None, text: str, out: list[Event], *, whole_text: bool) -> Word:
    """Read a word's text with the fast lexer; if it balks, run the word's substitutions from the
    tree and treat the word as computed."""
    events: list[Event] = []
    try:
        word = read_word(text, events, whole_text=whole_text)
    except Unsupported:
        if node is not None:
            _substitutions(node, out)
        return Word([Part("d", text, False)], text)
    out.extend(events)
    return word


def _substitutions(node: Node, out: list[Event]) -> None:
    if node.type in _SUBSTITUTIONS:
        _statement(node, out)
        return
    for child in node.named_children:
        _substitutions(child, out)
