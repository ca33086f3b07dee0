# syntax=docker/dockerfile:1
#
# compat itself, slim: `docker run --rm IMAGE doctor --facts /data/facts.json`, or a stage that
# other images copy from (the wheel in /opt/compat-dist, the build step in /usr/local/bin).
# The build runs docker/compat-build-step.sh, the same script tests/docker/ runs.
#
#   docker build -t compat .
#   docker run --rm -v "$PWD:/data:ro" compat doctor --facts /data/facts.json --gpus 8xH100 --driver 580.65.06

ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/compat/bin:$PATH
# Only what the wheel is made of; .dockerignore keeps the rest of the checkout out.
WORKDIR /src
COPY pyproject.toml README.md hatch_build.py ./
COPY compat ./compat
COPY matrix ./matrix
COPY docker/compat-build-step.sh /usr/local/bin/compat-build-step
RUN python -m venv /opt/compat \
    && compat-build-step install /src /opt/compat-dist

FROM python:${PYTHON_VERSION}-slim-bookworm
LABEL org.opencontainers.image.title="compat" \
      org.opencontainers.image.description="Environment compatibility resolver for LLM post-training stacks" \
      org.opencontainers.image.licenses="Apache-2.0"
# The runtime image gets the finished virtual environment only: no build tools, no source tree.
COPY --from=build /opt/compat /opt/compat
COPY --from=build /opt/compat-dist /opt/compat-dist
COPY --from=build /usr/local/bin/compat-build-step /usr/local/bin/compat-build-step
RUN groupadd --system --gid 10001 compat \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/compat --shell /usr/sbin/nologin compat
ENV PATH=/opt/compat/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 10001:10001
WORKDIR /home/compat
# The copied environment must still start, as the unprivileged user, before the image is tagged.
RUN compat --version
ENTRYPOINT ["compat"]
CMD ["--help"]
