"""The option grammars of the launchers the guard reads (issue 26 item 2), each from the program's manual (GNU
coreutils, util-linux, procps, sudo, bash, dash, zsh, fish, CPython, Node.js, perl, ruby, php, lua, expect …):
which short letters and long names take a value, and how many operands come before the command. Read with
`hook.detect.getopt.parse`; a spelling not listed here makes the reading inexact (its merges undetermined).
tests/test_hook_grammars.py holds one table of spellings per launcher.
"""

from __future__ import annotations

from hook.detect.getopt import Grammar

# name -> (grammar, operands before the command)
WRAPPERS: dict[str, tuple[Grammar, int]] = {
    "timeout": (Grammar("fk:ps:v", "foreground kill-after= preserve-status signal= verbose help version"), 1),
    "nohup": (Grammar("", "help version"), 0),
    "exec": (Grammar("cla:"), 0),
    "builtin": (Grammar(""), 0),
    "command": (Grammar("pVv"), 0),
    "sudo": (Grammar("AaBbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv",
                     "askpass auth-type= bell background close-from= chdir= preserve-env=? edit group= set-home "
                     "help host= login remove-timestamp reset-timestamp list non-interactive no-update "
                     "preserve-groups prompt= chroot= role= stdin shell type= command-timeout= other-user= user= "
                     "version validate login-class="), 0),
    "doas": (Grammar("LnsSa:C:u:"), 0),
    "time": (Grammar("af:o:pqv", "append format= output= portability quiet verbose help version"), 0),
    "nice": (Grammar("n:", "adjustment= help version"), 0),
    "ionice": (Grammar("c:n:p:P:tu:hV", "class= classdata= pid= pgid= ignore uid= help version"), 0),
    "stdbuf": (Grammar("i:o:e:", "input= output= error= help version"), 0),
    "chronic": (Grammar("ev"), 0),
    "unbuffer": (Grammar("p"), 0),
    "setsid": (Grammar("cfwhV", "ctty fork wait help version"), 0),
    "caffeinate": (Grammar("dimsut:w:"), 0),
    "taskset": (Grammar("acphV", "all-tasks cpu-list pid help version"), 1),
    "flock": (Grammar("sexnoFuw:E:hV", "shared exclusive nonblock nb close no-fork unlock timeout= wait= "
                      "conflict-exit-code= verbose help version"), 1),
    "torsocks": (Grammar("u:p:a:P:idqhV", "user= pass= address= port= isolate debug quiet shell help version"), 0),
    "coproc": (Grammar(""), 0),
    "proxychains": (Grammar("qf:"), 0),
    "busybox": (Grammar(""), 0),
    "toybox": (Grammar(""), 0),
    "chrt": (Grammar("abdfiomrpRvhVT:P:D:", "all-tasks batch deadline fifo idle other max rr pid reset-on-fork "
                     "verbose help version sched-runtime= sched-period= sched-deadline="), 1),
    "ifne": (Grammar("n"), 0),
    "catchsegv": (Grammar(""), 0),
    "dbus-run-session": (Grammar("", "config-file= dbus-daemon= help version"), 0),
    "eatmydata": (Grammar(""), 0),
    "fakeroot": (Grammar("l:i:s:ub:hv", "lib= faked= unknown-is-real fd-base= help version"), 0),
    "faketime": (Grammar("mfp:", "exclude-monotonic date-prog= help version"), 1),
    "tini": (Grammar("hsp:vwge:l"), 0),
    "dumb-init": (Grammar("cr:vVh", "single-child rewrite= verbose version help"), 0),
    "with-contenv": (Grammar(""), 0),
    "s6-setuidgid": (Grammar(""), 1),
    "lckdo": (Grammar("qw"), 1),
    "ssh-agent": (Grammar("a:cDdE:kP:st:O:"), 0),
}
WRAPPERS["gtimeout"] = WRAPPERS["timeout"]
WRAPPERS["proxychains4"] = WRAPPERS["proxychains"]
RUNS_NOTHING: dict[str, tuple[str, ...]] = {
    "command": ("-v", "-V"), "chrt": ("-p", "--pid", "-m", "--max"), "taskset": ("-p", "--pid"),
    "ionice": ("-p", "--pid", "-P", "--pgid", "-u", "--uid"),
    "sudo": ("-e", "--edit", "-l", "--list", "-v", "--validate", "-V", "--version", "-K", "--remove-timestamp"),
    "doas": ("-C",), "ssh-agent": ("-k", "-D", "-d"),
}
"""Options after which the wrapper runs no command it is given (``command -v gh``, ``sudo -l gh …``)."""

ENV = Grammar("0a:C:iS:u:v", "null argv0= chdir= ignore-environment split-string= unset= debug block-signal=? "
              "default-signal=? ignore-signal=? list-signal-handling help version")
SU = Grammar("c:C:fg:G:lmps:Pw:hV", "command= session-command= fast group= supp-group= login preserve-environment "
             "pty shell= whitelist-environment= help version")
SCRIPT = Grammar("ac:E:efqB:I:O:T:m:o:t::hV", "append command= echo= return flush quiet log-io= log-in= log-out= "
                 "log-timing= logging-format= output-limit= timing=? help version force")
WATCH = Grammar("bcCd::egn:pq:rtwxhv", "beep color no-color differences=? errexit chgexit interval= precise "
                "equexit= no-rerun no-title no-wrap exec help version")
XARGS = Grammar("0a:E:e::i::I:l::L:n:oprs:txP:d:", "null arg-file= delimiter= eof=? replace=? max-lines=? max-args= "
                "open-tty interactive no-run-if-empty max-chars= verbose exit max-procs= process-slot-var= "
                "show-limits help version")

_SET = "abefhkmnptuvxBCHPT"
SHELLS: dict[str, Grammar] = {
    "bash": Grammar("abcefhiklmnprstuvxBCDEHPTO:o:", "debugger dump-po-strings dump-strings help init-file= "
                    "rcfile= login noediting noprofile norc posix pretty-print restricted verbose version wordexp",
                    plus=_SET + "Oo", abbrev=False),
    "sh": Grammar("abcCefhiIlmnpqsuvVxEo:", "help version", plus="abCefhImnpuvxEo", abbrev=False),
    "zsh": Grammar("0123456789abcdefghiklmnpqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZo:", "emulate= help version login "
                   "interactive", plus="0123456789abcdefghiklmnpqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZo",
                   abbrev=False),
    "ksh": Grammar("abcefhiklmnprstuvxCEDRT:o:", "help version", plus="abcefhkmnpuvxCEo", abbrev=False),
}
for _name in ("dash", "ash", "hush", "yash", "lksh", "rbash"):
    SHELLS[_name] = SHELLS["bash"] if _name == "rbash" else SHELLS["sh"]
SHELLS["mksh"] = SHELLS["ksh"]
FISH = Grammar("c:C:d:D:f:hilnNo:pP:v", "command= init-command= debug= debug-stack-frames= features= help "
               "interactive login no-execute no-config print-rusage-self profile= profile-startup= private "
               "print-debug-categories version")

# interpreter family -> (grammar, the options whose value is code, the options that name a module or end the
# options with an installed program)
INTERPRETERS: dict[str, tuple[Grammar, tuple[str, ...], tuple[str, ...]]] = {
    "python": (Grammar("bBc:dEhiIm:OPqsSuvVW:xX:", "help help-env help-xoptions help-all version "
                       "check-hash-based-pycs="), ("-c",), ("-m",)),
    "node": (Grammar("e:p:r:C:ci", "eval= print= require= import= loader= conditions= input-type= check interactive "
                     "env-file= experimental-loader= inspect=? inspect-brk=? inspect-port= no-warnings "
                     "enable-source-maps experimental-vm-modules experimental-modules stack-size= max-old-space-size= "
                     "title= trace-warnings trace-deprecation no-deprecation preserve-symlinks "
                     "abort-on-uncaught-exception expose-gc harmony unhandled-rejections= watch test version help"),
             ("-e", "--eval", "-p", "--print"), ()),
    "perl": (Grammar("0::aC::cd::D::e:E:fF::hi::I:l::m:M:nNpsStTuUvwWx::X", "help version", digits="0l"),
             ("-e", "-E"), ()),
    "ruby": (Grammar("0::aC:cdE:e:F::hI:i::K::lnpr:sST::UvW::wx::y", "help version verbose jit yjit disable-gems "
                     "disable= enable= encoding= external-encoding= internal-encoding= dump= copyright",
                     digits="0T"), ("-e",), ()),
    "php": (Grammar("aB:c:d:eE:f:hiHlnqr:R:sS:t:vwz:", "help version ini=?"), ("-r", "-B", "-R", "-E"), ()),
    "lua": (Grammar("e:l:ivEW"), ("-e",), ()),
    "expect": (Grammar("dDinNc:f:b:"), ("-c",), ()),
    "rscript": (Grammar("e:", "vanilla verbose default-packages= no-environ no-site-file no-init-file restore "
                        "no-restore save no-save help version"), ("-e",), ()),
    "r": (Grammar("e:f:hqs", "vanilla verbose file= no-environ no-site-file no-init-file restore no-restore save "
                  "no-save slave silent quiet interactive args help version"), ("-e",), ()),
    "julia": (Grammar("e:E:L:iqhvO::p:t:J:C:g::", "eval= print= load= project=? threads= procs= quiet banner= "
                      "startup-file= history-file= color= optimize=? compile= depwarn= warn-overwrite= help version"),
              ("-e", "--eval", "-E", "--print"), ()),
    "osascript": (Grammar("e:l:s:i"), ("-e",), ()),
    "bun": (Grammar("e:p:r:", "eval= print= preload= smol hot watch silent bun cwd= env-file= config= help version"),
            ("-e", "--eval", "-p", "--print"), ()),
}
INTERPRETERS["nodejs"] = INTERPRETERS["node"]
INTERPRETERS["ts-node"] = INTERPRETERS["node"]
INTERPRETERS["tsx"] = INTERPRETERS["node"]
INTERPRETERS["pypy"] = INTERPRETERS["python"]
INTERPRETERS["luajit"] = INTERPRETERS["lua"]
NODE_BUNDLES = {"-pe": "-p", "-ep": "-e"}
"""Node reads ``-pe CODE`` as ``--print CODE`` (its one bundle); getopt would read ``e`` as ``-p``'s value."""
