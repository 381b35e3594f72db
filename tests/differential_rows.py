"""Fixed rows for tests/test_hook_differential.py: programs that once came back wrong, and one row per
modelled or undetermined construct (case arms, parameter operators, text produced at run time,
aliases, subshells, interpreter code). Each runs under real bash; ``verdict`` is what the guard must
answer: ``determined`` (and equal to what the stand-ins received) or ``undetermined``.
"""

from __future__ import annotations

ROWS: list[tuple[str, str]] = [
    ("gh pr merge 5 -R=acme/widgets", "determined"),
    ("gh -R acme/other pr merge 5", "determined"),
    ("gh pr merge 5 -R acme/other -R acme/widgets", "determined"),
    ("gh pr merge {5..5} --{squash,delete-branch}", "determined"),
    ("x=5; x+=6; gh pr merge $x", "determined"),
    ("(( $(gh pr merge 5) ))", "determined"),
    ("IFS=,; v=5,-R,acme/other; gh pr merge $v", "determined"),
    ("x=4; while true; do gh pr merge $x; x=6; break; done", "undetermined"),
    ("x=4; x=5 | true; gh pr merge $x", "determined"),
    ("gh pr merge 5 --disable-auto=false", "determined"),
    ("gh pr merge 5 -R 'acme/other x'", "undetermined"),
    ("gh pr merge +5", "undetermined"),
    ("git mm", "determined"),  # [alias] in ~/.gitconfig
    ("git pp", "determined"),  # [alias] in a file ~/.gitconfig includes
    ("cd sub && git lm", "determined"),  # [alias] in .git/config, run at the top of the working tree
    ("git -c alias.mm='!gh pr merge 7' mm", "determined"),  # -c wins over the file
    ("f() { gh pr merge \"$@\"; }; f 5 -R acme/other", "determined"),
    ("set -- 5 -R acme/other; shift; gh pr merge 7 \"$@\"", "determined"),
    ("printf '%s\\n' 5 7 | xargs -n1 gh pr merge", "determined"),
    ("f() { local x=7; gh pr merge $x; }; x=5; f; gh pr merge $x", "determined"),
    ("gh() { echo no; }; gh pr merge 5", "determined"),
    ("eval \"$(printf 'gh pr merge %s' 5)\"", "determined"),
    ('a=(5); a+=(-R acme/other); gh pr merge "${a[@]}"', "determined"),
    ('a=(5 7); gh pr merge "${a[1]}" && gh pr merge $a', "determined"),
    ('a=(-X PUT https://api.github.com/repos/acme/widgets/pulls/5/merge); curl "${a[@]}"', "determined"),
    ('a=([0]=5); gh pr merge "${a[@]}"', "undetermined"),
    ("n=3; gh pr merge $(( (n + 2) * 3 / 2 - -7 % 3 ))", "determined"),
    ("gh pr merge $((010))", "undetermined"),  # octal: not modelled
    ("x=5; gh pr merge $((x++))", "undetermined"),
    ("for n in 5 7; do gh pr merge $n -R acme/other; done", "determined"),
    ('x=4; for x in {5..6}; do gh pr merge "$x"; done', "determined"),
    ("for n in 5 7; do gh pr merge $n; break; done", "undetermined"),
    ("for n in; do gh pr merge 5; done", "determined"),
    ('v=xrepos/acme/widgets/pulls/5/merge; gh api "${v#x}" --method PUT -f merge_method=squash', "determined"),
    # `v=` runs only if the first merge succeeds: the second PR is unknown (was "determined" before `&&`
    # regions were joined; it assumed the first command succeeds)
    ('v=5.y; gh pr merge "${v%.y}" && v=; gh pr merge "${v:-7}"', "undetermined"),
    ('v=5.y; gh pr merge "${v%.y}"; v=; gh pr merge "${v:-7}"', "determined"),
    ('gh api "$EP" -X PUT', "undetermined"),
    ("x=5; while false; do x=7; done; gh pr merge $x", "undetermined"),  # zero runs or more
    ("x=5; case a in a) ((x++));; esac; gh pr merge $x", "undetermined"),
    # case arms: decided exactly when subject and patterns are plain text with * and ?; else undetermined
    ("x=ship; case $x in s*p) gh pr merge 5;; *) gh pr merge 7;; esac", "determined"),
    ("case b in a) gh pr merge 5;; esac", "determined"),  # no merge at all
    ("case a in a) v=5;& b) v=7;; esac; gh pr merge $v", "determined"),
    ("case a in a) gh pr merge 5;;& a*) gh pr merge 7;; esac", "determined"),
    ('case "$1" in "") gh pr merge 5;; esac', "undetermined"),
    ("case A in a) gh pr merge 5;; esac", "undetermined"),  # the agent's shell may have nocasematch on
    ("case a in [ab]) gh pr merge 5;; esac", "undetermined"),  # bracket expressions: not modelled
    ('case "$1" in x) v=5;; *) v=7;; esac; gh pr merge $v', "undetermined"),
    # a compound command in a pipeline or in the background runs in a subshell
    ("x=1; case a in a) x=5;; esac | cat; gh pr merge $x", "determined"),
    ("x=1; for i in 2; do x=5; done 2>&1 | cat; gh pr merge $x", "determined"),
    ("x=1; { x=5; } | cat; gh pr merge $x", "determined"),
    ("x=1; if true; then x=5; fi & wait; gh pr merge $x", "determined"),
    ("x=1; echo 3 | { read y; x=5; }; gh pr merge $x", "determined"),
    ("f() { { x=5; } | cat; gh pr merge $x; }; x=1; f", "determined"),
    # interpreter code: what it names is a hint; code that can run programs is undetermined
    ("python3 -c \"import subprocess as s; s.run(('g'+'h','pr','mer'+'ge','5'))\"", "undetermined"),
    ("python3 -c 'print(5)'", "determined"),
    # text tools that run what they compute
    ("echo gh pr mXrge 5 | sed 's/X/e/e'", "undetermined"),
    ("echo gh pr mXrge 5 | sed 's/X/e/'", "determined"),
    ("echo 5 | awk '{system(\"gh pr merge \" $1)}'", "undetermined"),
    # `unset` makes a variable surely unset, whatever the environment held
    ('unset v; gh "${v-pr}" merge 5', "determined"),
    ("GH_REPO=acme/other; export GH_REPO; unset GH_REPO; gh pr merge 5", "determined"),
    ('case "$1" in a) unset v;; esac; gh pr merge "${v-7}"', "undetermined"),
    # parameter operators
    ('v=xpr; gh "${v/x/}" merge 5', "determined"),
    ('v=m_e_r_g_e; gh pr "${v//_/}" 5', "determined"),
    ("v=MERGE; gh pr ${v,,} 5", "determined"),
    ('v=xxacme/otheryy; gh pr merge 5 -R "${v:2:10}"', "determined"),
    ('v=acme/other; gh pr merge 5 -R "acme/${v: -5}"', "determined"),
    ('v=aa; gh pr merge 5 -R "${v/a/&}"', "undetermined"),  # `&` is the match in bash 5.2
    # text produced at run time
    ('eval "$(emit gh pr merge 5)"', "undetermined"),
    ("emit gh pr merge 5 | bash", "undetermined"),
    ("$(emit gh) pr merge 5", "undetermined"),
    ('c=$(emit gh); "$c" pr merge 5', "undetermined"),
    ("source <(emit gh pr merge 5)", "undetermined"),
    ('eval "$(ssh-agent -s)"; gh pr merge 5', "determined"),
    ('eval "$(brew shellenv)"; gh pr merge 5', "determined"),
    ('eval "$(direnv export bash)"; gh pr merge 5', "undetermined"),  # it exports GH_REPO here
    ('eval "$(direnv export bash)"; gh pr merge 5 -R acme/widgets', "determined"),
    ("shopt -s expand_aliases\nalias m='gh pr merge'\nm 5", "undetermined"),
    ("x=g; ${x}h p${y}r mer\"\"ge 5", "undetermined"),
    ("python3 -c 'import subprocess; subprocess.run([\"gh\",\"pr\",\"merge\",\"5\"] if False else [\"true\"])'",
     "undetermined"),
    # a shell reading a script from a process substitution or stdin (redteam probe)
    ("bash <(echo gh pr merge 5)", "determined"),
    ("sh <(echo 'gh pr merge $1 -R acme/other') 7", "determined"),
    ('bash /dev/stdin <<< "gh pr merge 5"', "determined"),
    ("echo gh pr merge 5 | bash /dev/stdin", "determined"),
    ("bash <(emit gh pr merge 5)", "undetermined"),
    # trap actions run later, or not at all: undetermined
    ("trap 'gh pr merge 5' EXIT", "undetermined"),
    ("trap -- 'gh pr merge 5' ERR; false", "undetermined"),
    ("f() { trap 'gh pr merge 5' EXIT; }; f", "undetermined"),
    ("trap f EXIT; f() { gh pr merge 5; }", "undetermined"),
    ("trap 'echo bye' EXIT; gh pr merge 5 -R acme/other", "determined"),
    ("trap -p; trap - EXIT; gh pr view 5", "determined"),
    # `builtin gh` fails; `hash -p FILE gh` makes gh run FILE
    ("builtin gh pr merge 5; builtin eval 'gh pr merge 7'", "determined"),
    ("hash -p /bin/echo gh; gh pr merge 5", "undetermined"),
    # prefix assignments reach what runs here or in a child: a function, eval, bash -c, a script
    ("GH_REPO=acme/other bash -c 'gh pr merge 5'", "determined"),
    ("GH_REPO=acme/other eval 'gh pr merge 5'; gh pr merge 6", "determined"),
    ("f() { gh pr merge 5; }; GH_REPO=acme/other f; gh pr merge 6", "determined"),
    ("x=0; f() { x=2; }; x=1 f; gh pr merge $x", "determined"),
    ("GH_REPO=acme/other bash <<< 'gh pr merge 5'", "determined"),
    ("GH_REPO=acme/other flock /tmp -c 'gh pr merge 5'", "determined"),
    ("export GH_REPO=acme/x; env -u GH_REPO bash -c 'gh pr merge 5'", "determined"),
    # set -a exports every later assignment
    ("set -a; GH_REPO=acme/other; gh pr merge 5", "determined"),
    ("set -o allexport; GH_REPO=acme/other; gh pr merge 5; set +a; GH_REPO=acme/x; gh pr merge 6", "determined"),
    ("(set -a); GH_REPO=acme/other; gh pr merge 5", "determined"),
    ('case "$1" in a) set -a;; esac; GH_REPO=acme/other; gh pr merge 5', "undetermined"),
    ("while false; do set -a; done; GH_REPO=acme/other; gh pr merge 5", "undetermined"),
    # a Makefile or body on stdin is the command's stdin, never the hook's own (/dev/stdin in the hook)
    ("make -f /dev/stdin <<< $'all:\\n\\tgh pr merge 5'", "determined"),
    ("printf 'all:\\n\\tgh pr merge 5 -R acme/other\\n' | make -f -", "determined"),
    ("make -f <(printf 'all:\\n\\tgh pr merge 5\\n')", "undetermined"),
    ("echo '{\"query\":\"mutation{mergePullRequest(input:{pullRequestId:1}){clientMutationId}}\"}' "
     "| gh api graphql --input /dev/stdin", "undetermined"),
    # git push: push.default from -c, another git directory
    ("git -c push.default=nothing push", "determined"),
    ("GIT_DIR=.git git push origin HEAD:main", "undetermined"),
    # a function in a pipeline or in the background runs in a subshell
    ("x=5; f() { x=7; }; f & wait; gh pr merge $x", "determined"),
    ("x=5; f() { x=7; }; f | cat; gh pr merge $x", "determined"),
    # `[[ … ]];` ends at `]]` with a separator right after it
    ("x=5; [[ 1 ]]; gh pr merge $x", "determined"),
    ("[[ x ]]&&gh pr merge 5", "determined"),
    ("x=5; [[ $((x=7)) ]]; gh pr merge $x", "undetermined"),
    # a function named echo/printf/cat prints what it prints
    ("echo() { printf 7; }; gh pr merge $(echo 5)", "undetermined"),
    # start-up files a shell reads before its script; a script found on PATH
    ("echo 'gh pr merge 5' > e.sh; BASH_ENV=e.sh bash -c true", "determined"),
    ("echo 'export GH_REPO=acme/other' > e.sh; BASH_ENV=e.sh bash -c 'gh pr merge 5'", "determined"),
    ("echo 'gh pr merge 5' > e.sh; bash --rcfile e.sh -i -c true </dev/null", "determined"),
    ("echo 'gh pr merge 5' > e.sh; ENV=e.sh sh -i -c true </dev/null", "determined"),
    ("echo 'gh pr merge 5' > e.sh; chmod +x e.sh; PATH=.:$PATH e.sh", "determined"),
    # a branch that may not run (`&& …`, `|| …`, an `if` arm): what it assigns is unknown after it
    ("x=5; if [ -e /nonexistent ]; then x=7; fi; gh pr merge $x", "undetermined"),
    ("x=5; [ -e /nope ] && x=7; gh pr merge $x", "undetermined"),
    ("x=5; false || { x=7; }; gh pr merge $x", "undetermined"),
    ("f() { :; }; x=5; if false; then x=7; fi; gh pr merge $x", "undetermined"),
    ("x=5; true && x=7 && gh pr merge $x", "determined"),
    ("x=5; if true; then x=7; gh pr merge $x; else x=6; fi", "determined"),
    ("cd sub && gh pr merge 5 -R acme/other; gh pr merge 6 -R acme/other", "determined"),
    # readonly in a function sets the global variable (declare/local make a local)
    ("x=5; f() { readonly x=7; }; f; gh pr merge $x", "determined"),
    ("x=5; f() { declare x=7; }; f; gh pr merge $x", "determined"),
    # a file appended to, or written by a program whose output is unknown
    ("echo 5 >> f.txt; echo 5 >> f.txt; gh pr merge $(cat f.txt)", "undetermined"),
    ("echo 5 > f.txt; python3 -c 'print(7)' > f.txt; gh pr merge $(cat f.txt)", "undetermined"),
    # programs of other families, run for real (busybox, lua, tclsh, expect, tmux): a shell reads exactly,
    # interpreter code and a later run are undetermined, their look-alikes clean
    ("busybox sh -c 'gh pr merge 5 -R acme/other'", "determined"),
    ("busybox ash -c 'x=7; gh pr merge $x'", "determined"),
    ("busybox env GH_REPO=acme/other gh pr merge 5", "determined"),
    ("echo 5 | busybox xargs gh pr merge", "determined"),
    ("busybox timeout 5 gh pr merge 6", "determined"),
    ("busybox sh -c 'echo gh pr merge 5'", "determined"),
    ("lua -e 'os.execute(\"gh pr merge 5\")'", "undetermined"),
    ("lua5.4 -e 'os.execute([[gh pr merge 5 -R acme/other]])'", "undetermined"),
    ("lua -e 'print(1 + 1)'", "determined"),
    ("tclsh <<'EOF'\nexec gh pr merge 5\nEOF", "undetermined"),
    ("echo 'puts [expr 1 + 1]' | tclsh", "determined"),
    ("expect -c 'spawn gh pr merge 5; expect eof' >/dev/null", "undetermined"),
    ("expect -c 'puts hi'", "determined"),
    ("tmux new-session -d 'gh pr merge 5'", "undetermined"),
    ("tmux new-session -d 'echo gh pr merge 5 > /dev/null'", "determined"),
    ("tmux ls 2>/dev/null || true", "determined"),
    # issue 26: what a command sets up for another program to run, run here by that program (and removed again)
    ("printf '#!/bin/sh\\ngh pr merge 5\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
     "git commit --allow-empty -qm x; rm -f .git/hooks/pre-commit", "undetermined"),
    ("git config alias.shp '!gh pr merge 5'; git shp; git config --unset alias.shp", "undetermined"),
    ("printf 'all:\\n\\tgh pr merge 5\\n' > ../ship.mk; make -s -f ../ship.mk; rm -f ../ship.mk",
     "determined"),  # run here, exactly: the same merge the planted file holds
    ("printf 'gh pr merge 5\\n' > ../env.mh; BASH_ENV=../env.mh bash -c true; rm -f ../env.mh", "determined"),
    # issue 26: launchers' option grammars, for real
    ("script -qec 'gh pr merge 5' /dev/null", "determined"),
    ("env -S'gh pr merge 5 -R acme/other'", "determined"),
    ("bash -c -e 'gh pr merge 5'", "determined"),
    ("bash -s 5 <<< 'gh pr merge $1'", "determined"),
    ("timeout --sig=KILL 10 gh pr merge 5", "determined"),
    ("nice -n5 stdbuf -oL gh pr merge 5", "determined"),
]
