"""Option grammars, not spellings (issue 26 item 2): every launcher reads its options as the program does —
bundled short options (``-qec CMD``), a value attached (``-oVALUE``), ``--opt=VALUE`` and unique prefixes of long
names, ``--``, repeated flags — from its manual (hook/detect/grammars.py, hook/detect/getopt.py). One table per
launcher: the spellings that run ``gh pr merge 5`` (determined for the launchers read exactly, undetermined for
program code), the ones that run nothing, and a spelling the grammar does not know (undetermined, never a guess).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hook.detect.getopt import Grammar, parse
from tests.detect_rows import CLEAN, DET, UND, judge, make_checkout

GRAMMARS: dict[str, list[tuple[str, str]]] = {
    'timeout': [
        ('timeout -sKILL -k5 10 gh pr merge 5', DET),
        ('timeout --signal=KILL --kill-after 5 10 gh pr merge 5', DET),
        ('timeout --sig KILL 10 gh pr merge 5', DET),
        ('timeout -fp -v -- 10 gh pr merge 5', DET),
        ('timeout --frobnicate 10 gh pr merge 5', UND),
    ],
    'gtimeout': [
        ('gtimeout -z 10 gh pr merge 5', UND),
        ('gtimeout -k 5s -s TERM 30s gh pr merge 5', DET),
        ('gtimeout --kill=5 30 gh pr merge 5', DET),
    ],
    'nohup': [
        ('nohup -- gh pr merge 5', DET),
        ('nohup --frob gh pr merge 5', UND),
    ],
    'exec': [
        ('exec -z gh pr merge 5', UND),
        ('exec -a bot gh pr merge 5', DET),
        ('exec -cl gh pr merge 5', DET),
        ('exec -la bot gh pr merge 5', DET),
    ],
    'command': [
        ('command -p gh pr merge 5', DET),
        ('command -p -- gh pr merge 5', DET),
        ('command -pv gh pr merge 5', CLEAN),
        ('command -V gh pr merge 5', CLEAN),
    ],
    'sudo': [
        ('sudo -Eu bob gh pr merge 5', DET),
        ('sudo -uBob -- gh pr merge 5', DET),
        ('sudo --user=bob --preserve-env=GH_TOKEN gh pr merge 5', DET),
        ('sudo --preserve-env gh pr merge 5', DET),
        ('sudo -HnE gh pr merge 5', DET),
        ('sudo -g wheel -u bob gh pr merge 5', DET),
        ('sudo --us bob gh pr merge 5', DET),
        ('sudo -l gh pr merge 5', CLEAN),
        ('sudo -ll gh pr merge 5', CLEAN),
        ('sudo -Q gh pr merge 5', UND),
    ],
    'doas': [
        ('doas -u bob gh pr merge 5', DET),
        ('doas -nu bob gh pr merge 5', DET),
        ('doas -C /etc/doas.conf gh pr merge 5', CLEAN),
    ],
    # bash's `time` keyword takes -p alone (`time -f x cmd` runs a command named -f); GNU time's binary the rest
    'time': [
        ('/usr/bin/time --frob gh pr merge 5', UND),
        ('time -p gh pr merge 5', DET),
        ("/usr/bin/time -f '%e' -o /tmp/t gh pr merge 5", DET),
        ('command time --output=/tmp/t --append gh pr merge 5', DET),
        ('/usr/bin/time -ao/tmp/t gh pr merge 5', DET),
    ],
    'nice': [
        ('nice -n5 gh pr merge 5', DET),
        ('nice -n 5 gh pr merge 5', DET),
        ('nice --adjustment=5 gh pr merge 5', DET),
        ('nice -10 gh pr merge 5', DET),
        ('nice --adj 5 gh pr merge 5', DET),
    ],
    'ionice': [
        ('ionice -z gh pr merge 5', UND),
        ('ionice -c2 -n7 gh pr merge 5', DET),
        ('ionice -c 3 -t gh pr merge 5', DET),
        ('ionice --class=idle gh pr merge 5', DET),
        ('ionice -p 123', CLEAN),
    ],
    'stdbuf': [
        ('stdbuf -z gh pr merge 5', UND),
        ('stdbuf -oL -eL gh pr merge 5', DET),
        ('stdbuf -o0 gh pr merge 5', DET),
        ('stdbuf --output=L gh pr merge 5', DET),
        ('stdbuf -i 0 gh pr merge 5', DET),
    ],
    'chronic': [
        ('chronic -z gh pr merge 5', UND),
        ('chronic -ev gh pr merge 5', DET),
    ],
    'unbuffer': [
        ('unbuffer -z gh pr merge 5', UND),
        ('unbuffer -p gh pr merge 5', DET),
    ],
    'setsid': [
        ('setsid -z gh pr merge 5', UND),
        ('setsid -fw gh pr merge 5', DET),
        ('setsid --fork --wait gh pr merge 5', DET),
        ('setsid -c gh pr merge 5', DET),
    ],
    'caffeinate': [
        ('caffeinate -z gh pr merge 5', UND),
        ('caffeinate -dims gh pr merge 5', DET),
        ('caffeinate -t 60 gh pr merge 5', DET),
        ('caffeinate -it60 gh pr merge 5', DET),
    ],
    'taskset': [
        ('taskset -z 0x3 gh pr merge 5', UND),
        ('taskset -c 0,1 gh pr merge 5', DET),
        ('taskset 0x3 gh pr merge 5', DET),
        ('taskset --cpu-list 0 gh pr merge 5', DET),
        ('taskset -p 123', CLEAN),
        ('taskset -cp 0 123', CLEAN),
    ],
    'flock': [
        ('flock -z /tmp/l gh pr merge 5', UND),
        ("flock -xn /tmp/l -c 'gh pr merge 5'", DET),
        ('flock --timeout=5 /tmp/l gh pr merge 5', DET),
        ('flock -w5 /tmp/l gh pr merge 5', DET),
        ("flock -E 9 /tmp/l --command 'gh pr merge 5'", DET),
    ],
    'torsocks': [
        ('torsocks -i gh pr merge 5', DET),
        ('torsocks --isolate gh pr merge 5', DET),
        ('torsocks -P 9050 gh pr merge 5', DET),
    ],
    'coproc': [
        ('coproc gh pr merge 5', DET),
    ],
    'proxychains': [
        ('proxychains -z gh pr merge 5', UND),
        ('proxychains -q gh pr merge 5', DET),
        ('proxychains -f /etc/p.conf gh pr merge 5', DET),
    ],
    'proxychains4': [
        ('proxychains4 -z gh pr merge 5', UND),
        ('proxychains4 -qf/etc/p.conf gh pr merge 5', DET),
    ],
    'busybox': [
        ("busybox sh -c 'gh pr merge 5'", DET),
        ('busybox env gh pr merge 5', DET),
        ('busybox timeout 5 gh pr merge 5', DET),
    ],
    'toybox': [
        ('toybox env gh pr merge 5', DET),
        ('toybox timeout -s KILL 5 gh pr merge 5', DET),
    ],
    'chrt': [
        ('chrt -z 10 gh pr merge 5', UND),
        ('chrt -f 10 gh pr merge 5', DET),
        ('chrt --rr 5 gh pr merge 5', DET),
        ('chrt -b 0 gh pr merge 5', DET),
        ('chrt -p 123', CLEAN),
    ],
    'ifne': [
        ('ifne -z gh pr merge 5', UND),
        ('ifne -n gh pr merge 5', DET),
    ],
    'catchsegv': [
        ('catchsegv --frob gh pr merge 5', UND),
        ('catchsegv gh pr merge 5', DET),
    ],
    'dbus-run-session': [
        ('dbus-run-session --frob gh pr merge 5', UND),
        ('dbus-run-session --config-file=x.conf -- gh pr merge 5', DET),
        ('dbus-run-session -- gh pr merge 5', DET),
    ],
    'eatmydata': [
        ('eatmydata -- gh pr merge 5', DET),
    ],
    'fakeroot': [
        ('fakeroot -z gh pr merge 5', UND),
        ('fakeroot -u -- gh pr merge 5', DET),
        ('fakeroot -l /lib/x.so gh pr merge 5', DET),
        ('fakeroot --lib=/lib/x.so gh pr merge 5', DET),
    ],
    'faketime': [
        ("faketime -z '2020-01-01' gh pr merge 5", UND),
        ("faketime '2020-01-01' gh pr merge 5", DET),
        ("faketime -m '2020-01-01' gh pr merge 5", DET),
    ],
    'tini': [
        ('tini -z -- gh pr merge 5', UND),
        ('tini -s -- gh pr merge 5', DET),
        ('tini -g -p SIGKILL -- gh pr merge 5', DET),
        ('tini -sg -- gh pr merge 5', DET),
    ],
    'dumb-init': [
        ('dumb-init -z gh pr merge 5', UND),
        ('dumb-init -c gh pr merge 5', DET),
        ('dumb-init --rewrite 15:2 gh pr merge 5', DET),
        ('dumb-init -r15:2 gh pr merge 5', DET),
    ],
    'with-contenv': [
        ('with-contenv gh pr merge 5', DET),
    ],
    's6-setuidgid': [
        ('s6-setuidgid bob gh pr merge 5', DET),
    ],
    'lckdo': [
        ('lckdo -z /tmp/l gh pr merge 5', UND),
        ('lckdo -q /tmp/l gh pr merge 5', DET),
        ('lckdo -qw /tmp/l gh pr merge 5', DET),
    ],
    'ssh-agent': [
        ('ssh-agent -z gh pr merge 5', UND),
        ('ssh-agent -t 60 gh pr merge 5', DET),
        ('ssh-agent -s gh pr merge 5', DET),
        ('ssh-agent -k', CLEAN),
    ],
    'env': [
        ("env -S'gh pr merge 5'", DET),
        ("env -iS 'gh pr merge 5'", DET),
        ('env -uGH_REPO gh pr merge 5', DET),
        ('env --unset=GH_REPO gh pr merge 5', DET),
        ("env --split-string='gh pr merge 5'", DET),
        ('env -- gh pr merge 5', DET),
        ('env - gh pr merge 5', DET),
        ('env -v gh pr merge 5', DET),
        ("env -S'GH_REPO=acme/widgets gh pr merge 5'", DET),
        ('env --frob gh pr merge 5', UND),
    ],
    'su': [
        ("su -lc 'gh pr merge 5'", DET),
        ("su bob -c 'gh pr merge 5'", DET),
        ("su - bob --command='gh pr merge 5'", DET),
        ("su -s /bin/sh -c 'gh pr merge 5' bob", DET),
        ("su -mc 'gh pr merge 5' bob", DET),
        ("su --login bob -c 'gh pr merge 5'", DET),
        ('su - bob', CLEAN),
    ],
    'script': [
        ("script -qec 'gh pr merge 5' /dev/null", DET),
        ("script --command='gh pr merge 5' -q /dev/null", DET),
        ("script -q -c 'gh pr merge 5'", DET),
        ("script /dev/null -c 'gh pr merge 5'", DET),
        ("script -qfc 'gh pr merge 5' log", DET),
        ('script -q log.txt', CLEAN),
    ],
    'watch': [
        ('watch -tn5 gh pr merge 5', DET),
        ('watch -x gh pr merge 5', DET),
        ("watch --interval=5 --no-title 'gh pr merge 5'", DET),
        ('watch -n 5 -d gh pr merge 5', DET),
        ('watch --differences=permanent gh pr merge 5', DET),
    ],
    # shells: -c is a flag, the command string the first operand
    'bash': [
        ("bash -c -e 'gh pr merge 5'", DET),
        ("bash -xec 'gh pr merge 5'", DET),
        ("bash -o pipefail -c 'gh pr merge 5'", DET),
        ("bash --norc --noprofile -c 'gh pr merge 5'", DET),
        ('bash -lc \'gh pr merge "$1"\' sh 5', DET),
        ("bash +x -c 'gh pr merge 5'", DET),
        ("bash -O extglob -c 'gh pr merge 5'", DET),
        ("bash -s 5 <<< 'gh pr merge $1'", DET),
        ("bash -c -- 'gh pr merge 5'", DET),
        ("bash --frob -c 'gh pr merge 5'", UND),
    ],
    'sh': [
        ("sh -ec 'gh pr merge 5'", DET),
        ("sh -c -- 'gh pr merge 5'", DET),
        ("sh -o errexit -c 'gh pr merge 5'", DET),
        ("sh -euc 'gh pr merge 5'", DET),
    ],
    'dash': [
        ("dash --frob -c 'gh pr merge 5'", UND),
        ("dash -xc 'gh pr merge 5'", DET),
        ("dash -e -c 'gh pr merge 5'", DET),
    ],
    'zsh': [
        ("zsh --frob -c 'gh pr merge 5'", UND),
        ("zsh -fc 'gh pr merge 5'", DET),
        ("zsh -o errexit -c 'gh pr merge 5'", DET),
        ("zsh -ilc 'gh pr merge 5'", DET),
    ],
    'ksh': [
        ("ksh --frob -c 'gh pr merge 5'", UND),
        ("ksh -ec 'gh pr merge 5'", DET),
    ],
    'mksh': [
        ("mksh -c -e 'gh pr merge 5'", DET),
    ],
    'ash': [
        ("ash --frob -c 'gh pr merge 5'", UND),
        ("ash -ec 'gh pr merge 5'", DET),
    ],
    'rbash': [
        ("rbash --frob -c 'gh pr merge 5'", UND),
        ("rbash -xc 'gh pr merge 5'", DET),
    ],
    'yash': [
        ("yash --frob -c 'gh pr merge 5'", UND),
        ("yash -ec 'gh pr merge 5'", DET),
    ],
    'hush': [
        ("hush --frob -c 'gh pr merge 5'", UND),
        ("hush -c 'gh pr merge 5'", DET),
    ],
    'lksh': [
        ("lksh --frob -c 'gh pr merge 5'", UND),
        ("lksh -ec 'gh pr merge 5'", DET),
    ],
    'fish': [
        ("fish -c 'gh pr merge 5'", DET),
        ("fish --command='gh pr merge 5'", DET),
        ("fish -Nc 'gh pr merge 5'", DET),
        ("fish --no-config -c 'gh pr merge 5'", DET),
        ("fish -C 'set x 1' -c 'gh pr merge 5'", DET),
    ],
    # interpreters: their code is read by heuristics (undetermined); which word is the code is the grammar's
    'python': [
        ('python3 -qc \'import subprocess as s; s.run(("g"+"h", "pr", "mer"+"ge", "5"))\'', UND),
        ('python3 -qc \'import os; os.system("gh pr merge 5")\'', UND),
        ('python3 -Bc \'import os; os.system("gh pr merge 5")\'', UND),
        ('python3 -W ignore -c \'import os; os.system("gh pr merge 5")\'', UND),
        ('python3 -I -S -c \'import os; os.system("gh pr merge 5")\'', UND),
        ('python3 -X dev -c \'import os; os.system("gh pr merge 5")\'', UND),
        ('python3 -m json.tool x.json', CLEAN),
        ("python3 -c 'print(1)' gh pr merge 5", CLEAN),
    ],
    'node': [
        ('node -pe \'require("child_process").execSync("gh pr merge 5")\'', UND),
        ('node --eval=\'require("child_process").execSync("gh pr merge 5")\'', UND),
        ('node --no-warnings -e \'require("child_process").execSync("gh pr merge 5")\'', UND),
        ('node -r ts-node/register -e \'require("child_process").execSync("gh pr merge 5")\'', UND),
        ('node --input-type=module -e \'require("child_process").execSync("gh pr merge 5")\'', UND),
        ("node -e 'console.log(1)'", CLEAN),
    ],
    'perl': [
        ('perl -wle \'system("gh pr merge 5")\'', UND),
        ('perl -e\'system("gh pr merge 5")\'', UND),
        ('perl -Mstrict -we \'system("gh pr merge 5")\'', UND),
        ('perl -E \'system("gh pr merge 5")\'', UND),
        ("perl -ne 'print if /merge/' log.txt", CLEAN),
    ],
    'ruby': [
        ('ruby -we \'system("gh pr merge 5")\'', UND),
        ('ruby -e\'system("gh pr merge 5")\'', UND),
        ('ruby -rjson -e \'system("gh pr merge 5")\'', UND),
    ],
    'php': [
        ('php -r\'system("gh pr merge 5")\'', UND),
        ('php -d display_errors=1 -r \'system("gh pr merge 5")\'', UND),
        ('php -ddisplay_errors=1 -r \'system("gh pr merge 5")\'', UND),
    ],
    'lua': [
        ('lua -e\'os.execute("gh pr merge 5")\'', UND),
        ('lua -l socket -e \'os.execute("gh pr merge 5")\'', UND),
    ],
    'expect': [
        ("expect -dc 'set c g; exec ${c}h pr mer[set x ge] 5'", UND),
        ("expect -dc 'spawn gh pr merge 5; expect eof'", UND),
        ("expect -c 'spawn gh pr merge 5; expect eof'", UND),
    ],
    'rscript': [
        ('Rscript -e\'system("gh pr merge 5")\'', UND),
        ('Rscript --vanilla -e \'system(paste0("g", "h pr mer", "ge 5"))\'', UND),
        ('Rscript -e \'system("gh pr merge 5")\'', UND),
        ('Rscript --vanilla -e \'system("gh pr merge 5")\'', UND),
    ],
    'julia': [
        ("julia -e 'run(`gh pr merge 5`)'", UND),
        ("julia --eval='run(`gh pr merge 5`)'", UND),
    ],
    'osascript': [
        ('osascript -e\'do shell script "gh pr merge 5"\'', UND),
        ('osascript -ss -e \'do shell script "g" & "h pr mer" & "ge 5"\'', UND),
        ('osascript -e \'do shell script "gh pr merge 5"\'', UND),
        ('osascript -l AppleScript -e \'do shell script "gh pr merge 5"\'', UND),
    ],
    'bun': [
        ('bun -e \'require("child_process").execSync("gh pr merge 5")\'', UND),
        ('bun --eval=\'require("child_process").execSync("gh pr merge 5")\'', UND),
    ],
}


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path)


@pytest.mark.parametrize("launcher", sorted(GRAMMARS))
def test_each_launcher_reads_its_options_as_the_program_does(launcher: str, checkout: Path) -> None:
    for command, want in GRAMMARS[launcher]:
        got, found = judge(command, checkout)
        assert got == want, (command, found)
        if want == DET:
            assert [(m.repo, m.pr) for m in found.merges] == [("acme/widgets", 5)], (command, found)
        if want == UND:
            assert {m.repo for m in found.merges} <= {"acme/widgets", None}, (command, found)


@pytest.mark.parametrize(("shorts", "longs", "words", "options", "end", "exact"), [
    ("qec:", "", ["x", "-qec", "CMD", "file"], [("-q", None), ("-e", None), ("-c", "CMD")], 3, True),
    ("o:", "", ["x", "-ovalue", "rest"], [("-o", "value")], 2, True),
    ("", "signal= verbose", ["x", "--sig=KILL", "--verb", "cmd"], [("--signal", "KILL"), ("--verbose", None)], 3, True),
    ("", "verbose version", ["x", "--ver", "cmd"], [("--ver", None)], 2, False),  # ambiguous prefix
    ("d::", "", ["x", "-d", "5"], [("-d", None)], 2, True),  # an optional value is attached or absent
    ("v", "", ["x", "-v", "-v", "--", "-v"], [("-v", None), ("-v", None)], 4, True),
    ("a", "", ["x", "-b", "cmd"], [("-b", None)], 2, False),
    ("a", "all", ["x", "--all=yes", "cmd"], [("--all", "yes")], 2, False),  # a flag given a value
])
def test_getopt(shorts: str, longs: str, words: list[str], options: list[tuple[str, str | None]], end: int,
                exact: bool) -> None:
    parsed = parse(Grammar(shorts, longs), words)
    assert (parsed.options, parsed.end, parsed.exact) == (options, end, exact)
