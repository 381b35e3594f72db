"""The soundness rule for programs (design §6): ONE table giving each program the guard knows a kind, how
it is read, and why. A command is a determined non-merge only when every program it may run is either
modelled exactly or known not to execute its input.

Kinds:

- ``data``: reads or prints its arguments and stdin, never runs them (``echo``, ``grep``, ``jq``);
- ``wrapper``: runs its arguments as a command, here and now (``timeout``, ``sudo``, ``env``), modelled
  exactly by hook/detect/wrappers.py;
- ``interpreter``: runs code from its arguments, stdin, a here-document or a file (shells, ``python3``,
  ``lua``, ``tclsh``, ``expect``, ``awk``, ``make``): read where modelled; otherwise, code that is handed
  merge-shaped text makes the answer undetermined;
- ``runner``: runs a command later or elsewhere (``tmux``, ``at``, ``crontab``, ``systemd-run``, ``ssh``,
  containers: hook/detect/deferred.py, hook/detect/elsewhere.py), or after options not modelled exactly
  (``strace``, ``chroot``): what it runs is read, and a merge found there is undetermined (its time,
  directory and environment are not this command's);
- ``client``: reaches GitHub or git itself and has its own detector (``gh``, ``git``, ``curl``);
- ``unknown``: everything else (and the few rows listed only for a property, such as ``openssl``, a
  decoder). An unknown program whose arguments, stdin, here-document or named files carry merge-shaped
  text (`hook.detect.shaped.merge_shaped`) makes the answer undetermined (hook/detect/opaque.py).

Each row is ``(kind, reading, reason, names)``; ``reading`` is ``""`` (the kind says it all),
``"decoder"`` (its output may be a script hidden on purpose), ``"shell"`` (read by the shell model) or
``"module:function"``, the detector in hook/detect/ that reads it (imported on first use). Adding a
program is one name in a row here (or a row of its own) and one row in tests/test_hook_programs.py. Plain
literals, imported only by the full reader: the prefilter keeps its own view
(`hook.detect.prefilter.CONSUMERS`, `INTERPRETERS`), pinned to this table by a test, so the fast path pays
nothing for it (design §7). ``RUNS_WITH`` refines a few data rows: with one of those options the program
runs a command it is given.
"""

from __future__ import annotations

DATA, WRAPPER, INTERPRETER, RUNNER, CLIENT, UNKNOWN = "data", "wrapper", "interpreter", "runner", "client", "unknown"
KINDS = (DATA, WRAPPER, INTERPRETER, RUNNER, CLIENT, UNKNOWN)

_TEXT = "prints, searches or transforms text; never runs it"
_FILES = "reads, lists or changes files and their metadata; never runs them"
_INFO = "reports on the system, the session or the network; runs nothing it is given"
_STATE = "a shell builtin the reader models (it changes the shell's state or prints; it runs nothing)"
_PKG = "installs or lists packages: its arguments are names, never commands"
_BUILD = ("builds, tests, lints or formats the project: runs the project's own code and configuration (the "
          "user's programs), never its arguments or stdin as a command")
_ARCHIVE = "packs, unpacks or compresses files; never runs them"
_DECODE = "decodes or transforms text: its output may be a script hidden on purpose (a shell that runs it is read)"
_CODE = "runs code from its arguments, stdin or a file: string literals and capabilities are read (script.py)"
_UNREAD = "runs code from its arguments, stdin or a file, in a language the guard does not read"
_RUNNER = "runs a command later or elsewhere: what it runs is read, and a merge there is undetermined"
_CONTAINER = ("runs a command in a container, pod or machine whose programs are not these: merge-shaped text is "
              "undetermined")
_WRAP = "runs its arguments as a command, here and now (options modelled in wrappers.py)"
_AROUND = ("runs its arguments as a command, after options the guard does not model exactly: a merge "
           "there is undetermined")
_RUN_SUB = "runs the command after its subcommand (`run`, `exec` …), here and now"
_AGENT = "a nested agent session: asked to merge, it may (script.py)"

# (kind, reading, reason, the programs it applies to): a program's row is the one that names it
ROWS: tuple[tuple[str, str, str, str], ...] = (
    (DATA, "", _TEXT,
     """
     grep egrep fgrep zgrep rg ag ack ugrep jq gojq jaq yq fx gron head tail wc sort uniq cut paste join fold
     fmt nl od hexdump strings comm cmp diff diff3 sdiff colordiff delta column colrm look tac shuf expand
     unexpand numfmt iconv dos2unix unix2dos less more most bat batcat pager man info tldr glow cloc tokei
     md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum seq yes expr factor bc pbcopy
     pbpaste xclip xsel wl-copy wl-paste clip ts pv tput clear reset stty figlet cowsay lolcat sponge vidir
     patch wdiff csplit split tsort ptx pr jo jless mdcat pandoc sqlformat redis-cli
     """),
    (DATA, "", _FILES,
     """
     ls dir vdir tree exa eza lsd rm mkdir rmdir touch chmod chown chgrp link unlink stat du df dust duf ncdu
     basename dirname realpath readlink file truncate mktemp sync shred mkfifo mknod rsync scp sftp rclone code
     subl nano pico micro open xdg-open trash trash-put lsof fuser inotifywait fswatch
     """),
    (DATA, "planted:copy", _FILES + "; what it writes holds its source's text (hook/detect/planted.py)",
     "cp mv install ln dd"),
    (DATA, "", _INFO,
     """
     pwd date cal sleep usleep true false test [ id whoami groups logname users who w hostname uname arch
     nproc uptime free ps top htop btop kill killall pkill pgrep pidof which whereis printenv getconf locale
     tty lsblk lscpu lsusb lspci findmnt dmesg journalctl last lastlog sw_vers system_profiler sysctl ping
     ping6 traceroute tracepath mtr dig host nslookup whois ip ifconfig netstat ss ssh-keygen ssh-add
     ssh-keyscan gpg gpg2 pass notify-send say beep tmutil diskutil vm_stat iostat vmstat mpstat sar
     nvidia-smi systemd-analyze timedatectl hostnamectl localectl loginctl networkctl resolvectl defaults
     plutil mdfind xattr codesign spctl security sudoedit atq atrm
     """),
    (DATA, "", _STATE,
     """
     cd pushd popd dirs chdir set-location export declare typeset local readonly unset set shopt read
     mapfile readarray let shift getopts wait jobs fg bg disown ulimit umask times history fc return exit
     break continue logout caller complete compgen compopt enable help bind suspend : type write-output
     write-host get-content select-string get-childitem set-content out-file test-path get-location
     """),
    (DATA, "", _PKG,
     """
     pip pip3 gem apt apt-get apt-cache dpkg dnf yum rpm zypper pacman apk snap flatpak port choco scoop
     winget brew cargo-binstall pre-commit npm-check-updates ncu corepack nvm fnm volta rustup sdk
     update-alternatives
     """),
    (DATA, "", _BUILD,
     """
     pytest py.test tox nox ruff black isort flake8 pylint mypy pyright pyflakes bandit coverage eslint
     prettier tsc jest vitest mocha ava playwright cypress webpack vite rollup esbuild parcel turbo nx lerna
     biome stylelint cargo rustfmt gofmt goimports golangci-lint staticcheck mvn mvnw gradle gradlew ant sbt
     dotnet msbuild xcodebuild xcrun pod ld cmake ctest ninja meson bazel bazelisk buck2 pants scons autoreconf
     shellcheck shfmt hadolint actionlint yamllint markdownlint codespell typos vale sphinx-build mkdocs hugo
     jekyll rspec rubocop phpunit composer phpstan elm flutter tflint semgrep trivy grype syft cosign protoc buf
     sqlc alembic prisma wasm-pack
     """),
    (INTERPRETER, "compiled:compiled",
     "compiles or assembles source into a program that runs now, later or preloaded: source text in the command "
     "(stdin, a file it wrote) is read like interpreter code, a source file on disk when it names a merge",
     "gcc g++ cc c++ clang clang++ tcc gfortran go rustc zig javac java kotlinc swift swiftc nim crystal dart as "
     "nasm yasm"),
    (DATA, "", _ARCHIVE, "zip unzip 7z 7za zstd unzstd lz4 cpio ar bunzip2 unxz pigz brotli"),
    (DATA, "", _FILES + "; with an option of `RUNS_WITH` it runs a command",
     "tar fd fdfind"),
    (DATA, "decoder", _DECODE, "base64 base32 basenc xxd gunzip zcat gzip bzip2 xz rev tr uudecode"),
    (UNKNOWN, "decoder", "decodes and encrypts text, and speaks TLS to servers: an unknown program", "openssl"),
    (UNKNOWN, "decoder", "decodes text (-decode) and more: an unknown program", "certutil"),
    (DATA, "script:writes", "prints text or copies it to files", "echo printf cat tee"),
    (DATA, "shellenv:alias", "defines an alias: a later use of the name reads both ways", "alias"),
    (DATA, "shellenv:unalias", "removes an alias", "unalias"),
    (DATA, "shellrun:hash_p", "`hash -p FILE NAME` makes NAME run FILE: read like an alias", "hash"),
    (WRAPPER, "", _WRAP,
     """
     timeout gtimeout nohup exec builtin command sudo doas time nice ionice stdbuf chronic unbuffer setsid
     caffeinate taskset flock torsocks coproc proxychains proxychains4 env xargs find busybox toybox watch su
     script chrt ifne catchsegv dbus-run-session eatmydata fakeroot faketime with-contenv tini dumb-init
     s6-setuidgid lckdo ssh-agent
     """),
    (RUNNER, "deferred:around", _AROUND,
     """
     xvfb-run systemd-inhibit pkexec runuser sg setpriv nsenter unshare chroot strace ltrace valgrind numactl
     cpulimit prlimit cgexec firejail bwrap retry sops perf hyperfine
     """),
    (WRAPPER, "", _RUN_SUB,
     """
     op doppler infisical aws-vault uv poetry pipenv direnv mise rtx dotenv npx bunx devbox pipx uvx conda
     mamba micromamba hatch pdm rye bundle asdf rbenv pyenv nodenv goenv opam nix-shell flox chamber envchain
     teller summon berglas dotenvx
     """),
    (INTERPRETER, "", "runs its arguments as shell text, in this shell (wrappers.py)", "eval"),
    (INTERPRETER, "", "PowerShell's Invoke-Expression: runs its argument as PowerShell (wrappers.py)", "iex"),
    (INTERPRETER, "", "runs its argument as PowerShell text (wrappers.py)", "invoke-expression"),
    (WRAPPER, "script:start_process", "PowerShell's Start-Process: runs -FilePath with -ArgumentList", "start-process"),
    (WRAPPER, "script:start_process", "alias of Start-Process", "saps"),
    (WRAPPER, "script:start_process", "alias of Start-Process (cmd's `start` runs its arguments too)", "start"),
    (INTERPRETER, "shell", "a shell: the text it runs is read by the shell model",
     "bash sh zsh dash ksh ash mksh fish rbash yash hush lksh pwsh powershell pwsh-preview cmd"),
    (INTERPRETER, "shellrun:source", "runs a file in this shell", "source ."),
    (RUNNER, "shellrun:trap", "runs its action later (at exit, on a signal) or never", "trap"),
    (INTERPRETER, "script:interpreter", _CODE,
     """
     python pypy node nodejs deno ruby perl php osascript lua luajit tclsh wish jimsh expect r rscript julia
     elixir erl groovy guile racket sbcl clisp jshell scala kotlin ts-node tsx ipython jython irb ocaml
     runghc runhaskell ghci clojure bb janet fennel raku
     """),
    (INTERPRETER, "script:interpreter", "runs code or a package.json script (`bun -e`, `bun run NAME`)", "bun"),
    (INTERPRETER, "make:make", "runs the Makefile's recipes through sh", "make gmake"),
    (INTERPRETER, "make:runner", "runs a recipe or package.json script through sh",
     "just task npm yarn pnpm rake mage"),
    (INTERPRETER, "textprog:sed", "runs commands it computes with `e` and `s///e`", "sed gsed"),
    (INTERPRETER, "textprog:awk", "runs commands with system() and pipes", "awk gawk mawk nawk"),
    (INTERPRETER, "textprog:parallel", "runs command lines it builds from its input", "parallel"),
    (INTERPRETER, "", _UNREAD,
     """
     dc m4 gdb lldb sqlite3 psql mysql mariadb duckdb mlr socat lftp ed octave matlab maxima gnuplot pdflatex
     latexmk lualatex xelatex ansible ansible-playbook terraform tofu pulumi helm salt fab invoke ghc
     """),
    (INTERPRETER, "textprog:editor",
     "an editor: runs the commands it is given (`-c CMD`, `+CMD`, `--eval`, a script), not the files it opens",
     "vim vi nvim ex emacs emacsclient"),
    (INTERPRETER, "script:agent", _AGENT,
     "codex gemini aider opencode cursor-agent goose amp crush claude qwen copilot droid kiro-cli cline"),
    (RUNNER, "deferred:later", _RUNNER,
     """
     tmux screen at batch crontab systemd-run launchctl entr watchexec nodemon reflex pueue nq tsp daemonize
     start-stop-daemon systemctl service supervisorctl pm2 forever
     """),
    (RUNNER, "elsewhere:elsewhere", _CONTAINER,
     """
     ssh mosh rsh autossh docker podman nerdctl finch kubectl oc lxc incus vagrant multipass toolbox
     distrobox distrobox-enter wsl orb colima limactl lima gcloud az aws fly flyctl heroku railway render
     vercel netlify docker-compose podman-compose k3s crictl ctr machinectl systemd-nspawn qemu-system-x86_64
     virsh apptainer singularity nix devcontainer
     """),
    (CLIENT, "gh:gh", "GitHub's CLI, read as cobra/pflag read it", "gh"),
    (CLIENT, "gh:hub", "the older GitHub CLI: `hub api` reaches the API", "hub"),
    (CLIENT, "git:git", "git: pushes, aliases, the local story of a branch", "git"),
    (CLIENT, "sapling:sl", "Sapling's CLI (`sl land`, `sl push --to main`), not modelled: merge-shaped arguments "
     "are undetermined; in PowerShell, Set-Location", "sl"),
    (CLIENT, "http:curl", "HTTP client: GitHub's REST and GraphQL endpoints", "curl"),
    (CLIENT, "http:wget", "HTTP client: GitHub's REST and GraphQL endpoints", "wget wget2"),
    (CLIENT, "http:httpie", "HTTPie-style client", "http https xh xhs"),
    (CLIENT, "http:invoke_rest", "PowerShell's HTTP cmdlets", "invoke-restmethod irm invoke-webrequest iwr"),
)
# each row's names as " a b c ": a lookup is a substring search in 45 strings, which costs the reader less
# than building an 800-name dict on every start (design §7); `PROGRAMS` is that dict, built on first use
_PADDED = tuple((f" {names.replace(chr(10), ' ')} ", (kind, reading, reason)) for kind, reading, reason, names in ROWS)
_TABLE: dict[str, tuple[str, str, str]] = {}


def __getattr__(name: str) -> dict[str, tuple[str, str, str]]:
    """``PROGRAMS``: program name -> (kind, reading, reason), for the tests and the docs (built once)."""
    if name != "PROGRAMS":
        raise AttributeError(name)
    if not _TABLE:
        for kind, reading, reason, names in ROWS:
            _TABLE.update(dict.fromkeys(names.split(), (kind, reading, reason)))
    return _TABLE


def _lookup(name: str) -> tuple[str, str, str] | None:
    key = f" {name} "
    for names, entry in _PADDED:
        if key in names:
            return entry
    return None

RUNS_WITH: dict[str, tuple[str, ...]] = {
    "tar": ("--to-command", "--checkpoint-action", "--use-compress-program", "-I", "--info-script", "-F",
            "--new-volume-script", "--rsh-command"),
    "fd": ("-x", "--exec", "-X", "--exec-batch"),
    "fdfind": ("-x", "--exec", "-X", "--exec-batch"),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "scp": ("-S", "-o"),
    "sftp": ("-S", "-b", "-D", "-o"),
    "zip": ("-TT", "--unzip-command"),
    "less": ("+!",),
}
"""Options with which a *data* program runs a command it is given (``tar --to-command=CMD``, ``rsync -e CMD``,
``fd -x CMD``): with one of them it is read as an unknown program (hook/detect/opaque.py)."""

VERSIONED = (INTERPRETER,)
"""Kinds whose rows also name versioned binaries: ``python3.12``, ``lua5.4``, ``tclsh8.6``, ``php8.2``."""


def command_name(word: str) -> str:
    """The table's key for a command word: ``/usr/bin/gh`` -> ``gh``; ``gh.exe`` -> ``gh``; lower case
    (PowerShell and macOS ignore case)."""
    name = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    for suffix in (".exe", ".cmd", ".bat"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def row(name: str) -> tuple[str, str, str] | None:
    """The table's row for a command name (already lower-cased, without directory or ``.exe``), or None:
    an unknown program. ``python3.12`` and ``lua5.4`` read as ``python`` and ``lua``."""
    if not name or " " in name:
        return None
    found = _lookup(name)
    if found is not None:
        return found
    if name.startswith(("python", "pypy")):
        return _lookup("python")
    if "claude" in name:
        return _lookup("claude")
    stem = name.rstrip("0123456789.-")
    if stem != name and stem:
        found = _lookup(stem)
        if found is not None and found[0] in VERSIONED:
            return found
    return None
