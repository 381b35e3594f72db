# One image for the web app and the workers (design §8). Build from the repository root:
#
#   docker build -t merge-hold:0.1.0 .
#
#   docker run … merge-hold:0.1.0                          # web: gunicorn on :8000 (the default command)
#   docker run … merge-hold:0.1.0 merge-hold worker        # worker: the same image, another command
#
# Kubernetes (deploy/k8s) and compose (deploy/compose.yml) run this one image for both. No secret is
# baked in: every setting comes from the environment at run time (GITHUB_*, REDIS_URL, MERGE_HOLD_*;
# see merge_hold/settings.py).

# --- build: install the package and its pinned dependencies into a virtualenv ---------------------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/merge-hold
# Only the packages: never the checkout's .venv, .merge-hold/ (dev secrets) or tests (.dockerignore too).
COPY pyproject.toml README.md ./
COPY core ./core
COPY state ./state
COPY app ./app
COPY workers ./workers
COPY hook ./hook
COPY merge_hold ./merge_hold
RUN /opt/merge-hold/bin/pip install . \
    && /opt/merge-hold/bin/python -c "import app, state.store, workers.ops.cli, hook, merge_hold.cli"

# --- runtime: the virtualenv alone, run as an unprivileged user ----------------------------------------
FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/merge-hold/bin:$PATH \
    MERGE_HOLD_API_TOKENS_FILE=/var/lib/merge-hold/tokens
COPY --from=build /opt/merge-hold /opt/merge-hold
# The hashed API tokens file lives on a volume (`merge-hold token create NAME` writes it); no home dir.
RUN useradd --system --uid 10001 --no-create-home --home-dir /nonexistent merge-hold \
    && mkdir -p /var/lib/merge-hold \
    && chown 10001:10001 /var/lib/merge-hold
WORKDIR /var/lib/merge-hold
USER 10001
EXPOSE 8000
# SIGTERM: gunicorn shuts down gracefully; an rq worker finishes the job in hand (warm shutdown).
STOPSIGNAL SIGTERM
# Liveness of the web command. A worker container (no web server) overrides it: compose pings Redis
# instead, Kubernetes ignores HEALTHCHECK and uses its probes (deploy/k8s).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
# The production server (design §5): gunicorn, 2 workers x 4 threads, the app built by its factory.
# No control socket: the container has no writable home, and nothing here uses `gunicornc`.
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--workers", "2", "--threads", "4", "--worker-class", "gthread", \
     "--no-control-socket", "--worker-tmp-dir", "/dev/shm", "--graceful-timeout", "20", \
     "--access-logfile", "-", "app:create_app()"]
