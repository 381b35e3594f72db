# One image for the web app and the workers (design §8). Build from the repository root:
#
#   docker build -t REGISTRY/merge-hold:0.1.0 .
#
#   docker run … REGISTRY/merge-hold:0.1.0                        # web: gunicorn on :8000 (the default command)
#   docker run … REGISTRY/merge-hold:0.1.0 merge-hold worker      # worker: the same image, another command
#
# Kubernetes (deploy/k8s) and compose (deploy/compose.yml) run this one image for both, with these same
# commands. No secret is baked in: every setting comes from the environment at run time (GITHUB_*,
# REDIS_URL, MERGE_HOLD_*; README "Deploy"). Reproducible: the base image can be pinned by digest
# (--build-arg PYTHON_IMAGE=python:3.11-slim@sha256:…) and every Python package, transitive ones too, is
# installed from requirements.lock by hash.
ARG PYTHON_IMAGE=python:3.11-slim

# --- build: install the package and its locked dependencies into a virtualenv --------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/merge-hold
# The lock first: its layer (every dependency) is rebuilt only when the lock changes.
COPY requirements.lock ./
RUN /opt/merge-hold/bin/pip install --require-hashes --no-deps -r requirements.lock
# Only the packages: never the checkout's .venv, .merge-hold/ (dev secrets) or tests (.dockerignore too).
COPY pyproject.toml README.md ./
COPY core ./core
COPY foundation ./foundation
COPY state ./state
COPY app ./app
COPY workers ./workers
COPY hook ./hook
COPY merge_hold ./merge_hold
RUN /opt/merge-hold/bin/pip install --no-deps . \
    && /opt/merge-hold/bin/pip check \
    && /opt/merge-hold/bin/python -c "import app, foundation.settings, state.store, workers.ops.cli, hook, merge_hold.cli, merge_hold.gunicorn_conf"

# --- runtime: the virtualenv alone, run as an unprivileged user and group -------------------------------
FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="merge-hold" \
      org.opencontainers.image.description="Hold pull requests from merging: web app and workers" \
      org.opencontainers.image.licenses="MIT"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/merge-hold/bin:$PATH \
    MERGE_HOLD_API_TOKENS_FILE=/var/lib/merge-hold/tokens
COPY --from=build /opt/merge-hold /opt/merge-hold
# User and group 10001 (the manifests' runAsUser/runAsGroup/fsGroup): a group of its own, not the system
# group useradd would pick. The hashed API tokens file lives on a volume (`merge-hold token create NAME`
# writes it); no home directory.
RUN groupadd --system --gid 10001 merge-hold \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin merge-hold \
    && mkdir -p /var/lib/merge-hold \
    && chown 10001:10001 /var/lib/merge-hold
WORKDIR /var/lib/merge-hold
USER 10001:10001
EXPOSE 8000
# SIGTERM: gunicorn shuts down gracefully; an rq worker finishes the job in hand (warm shutdown).
STOPSIGNAL SIGTERM
# Health by role (merge_hold/healthcheck.py): a worker container runs `merge-hold worker --healthcheck`
# (registered, heartbeating, Redis reached through any REDIS_URL form), a web container GETs /healthz.
# Kubernetes ignores HEALTHCHECK and runs the same checks as its probes (deploy/k8s).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-m", "merge_hold.healthcheck"]
# The production web server (design §5), spelled once: merge_hold/gunicorn_conf.py (2 workers x 4
# threads; more than one worker needs MERGE_HOLD_SECRET_KEY, and refuses to start without it).
CMD ["gunicorn", "--config", "python:merge_hold.gunicorn_conf", "app:create_app()"]
