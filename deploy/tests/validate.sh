#!/usr/bin/env bash
# Validate what deploy/ ships against the real schemas:
#   - the Kubernetes manifests, as kustomize renders them (base, each component, the example
#     overlay), with kubernetes-validate (PyPI; it ships the Kubernetes schemas) in strict
#     mode: unknown fields are errors;
#   - the compose file against the compose specification (check-jsonschema's vendored
#     compose-spec schema, PyPI);
#   - the systemd units with `systemd-analyze verify`, their ExecStart pointed at the binaries
#     just built: any complaint fails.
# Each validator is first shown a broken file and must reject it, so a validator that accepts
# anything cannot pass this script.
#
#   deploy/tests/validate.sh [BIN_DIR]     (coordinator and worker; default target/ci,
#                                           then target/release)
#
# The Python validators are installed into target/deploy-venv on first use. A tool that is
# missing (no kubectl for kustomize, no systemd-analyze, no way to reach PyPI) is reported as
# SKIPPED by name; anything that runs and fails makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/../.."

K8S_VERSION=1.32.0
OUT=target/deploy-validate
VENV=target/deploy-venv
mkdir -p "$OUT"
failed=0
ok() { echo "  ok       $*"; }
bad() { echo "  FAIL     $*"; failed=1; }
skipped() { echo "  SKIPPED  $*"; }

BIN=${1:-}
if [ -z "$BIN" ]; then
    for d in target/ci target/release target/quick; do
        if [ -x "$d/coordinator" ] && [ -x "$d/worker" ]; then BIN=$d; break; fi
    done
fi

# ---- the Python validators ------------------------------------------------------------------
if [ ! -x "$VENV/bin/kubernetes-validate" ] || [ ! -x "$VENV/bin/check-jsonschema" ]; then
    python3 -m venv "$VENV" >/dev/null 2>&1 \
        && "$VENV/bin/pip" install -q --disable-pip-version-check \
            'kubernetes-validate>=1.32' 'check-jsonschema>=0.29' >"$OUT/pip.log" 2>&1 \
        || true
fi
have_kv=0
[ -x "$VENV/bin/kubernetes-validate" ] && [ -x "$VENV/bin/check-jsonschema" ] && have_kv=1

# ---- Kubernetes ---------------------------------------------------------------------------
echo "kubernetes manifests (kubernetes-validate --strict, Kubernetes $K8S_VERSION):"
if [ "$have_kv" = 0 ]; then
    skipped "the validators could not be installed from PyPI (see $OUT/pip.log)"
elif ! command -v kubectl >/dev/null; then
    skipped "kubectl is not installed: kustomize output cannot be rendered"
else
    # Everything the repository offers at once: base plus both components.
    mkdir -p "$OUT/all"
    cat >"$OUT/all/kustomization.yaml" <<'EOF'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../../deploy/k8s/base
components:
  - ../../../deploy/k8s/components/worker-hpa
  - ../../../deploy/k8s/components/servicemonitor
  - ../../../deploy/k8s/components/tls
EOF
    for target in deploy/k8s/base deploy/k8s/overlays/example "$OUT/all"; do
        name=$(echo "$target" | tr '/' '_')
        if ! kubectl kustomize "$target" >"$OUT/$name.yaml" 2>"$OUT/$name.err"; then
            bad "kustomize $target: $(head -n3 "$OUT/$name.err")"
            continue
        fi
        resources=$(grep -c '^kind:' "$OUT/$name.yaml" || true)
        if "$VENV/bin/kubernetes-validate" --strict -k "$K8S_VERSION" "$OUT/$name.yaml" \
            >"$OUT/$name.log" 2>&1; then
            ok "$target: $resources resources valid"
        else
            bad "$target:"; grep -v '^INFO' "$OUT/$name.log" | head -n 20
        fi
        # The ServiceMonitor is a Prometheus Operator CRD: no schema ships with the validator.
        grep -q "Couldn't find schema for kind ServiceMonitor" "$OUT/$name.log" \
            && echo "           (ServiceMonitor: a CRD, not in the Kubernetes schemas; not validated)"
        if grep -v "ServiceMonitor" "$OUT/$name.log" | grep -q '^WARN'; then
            bad "$target: warnings"; grep '^WARN' "$OUT/$name.log"
        fi
    done
    # The validator must reject a broken manifest.
    sed 's/^  replicas: .*/  replicas: "two"/' deploy/k8s/base/worker-deployment.yaml >"$OUT/broken.yaml"
    if "$VENV/bin/kubernetes-validate" --strict -k "$K8S_VERSION" "$OUT/broken.yaml" >/dev/null 2>&1; then
        bad "kubernetes-validate accepted a Deployment with replicas: \"two\""
    else
        ok "kubernetes-validate rejects a broken Deployment"
    fi
fi

# ---- compose --------------------------------------------------------------------------------
echo "compose file (compose specification):"
if [ "$have_kv" = 0 ]; then
    skipped "check-jsonschema could not be installed from PyPI (see $OUT/pip.log)"
else
    if "$VENV/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml \
        >"$OUT/compose.log" 2>&1; then
        ok "deploy/compose.yaml valid"
    else
        bad "deploy/compose.yaml:"; cat "$OUT/compose.log"
    fi
    printf 'services:\n  coordinator:\n    image: x\n    imagee: y\n' >"$OUT/broken-compose.yaml"
    if "$VENV/bin/check-jsonschema" --builtin-schema vendor.compose-spec "$OUT/broken-compose.yaml" \
        >/dev/null 2>&1; then
        bad "check-jsonschema accepted a service with an unknown key"
    else
        ok "check-jsonschema rejects a broken compose file"
    fi
fi

# ---- systemd --------------------------------------------------------------------------------
echo "systemd units (systemd-analyze verify):"
if ! command -v systemd-analyze >/dev/null; then
    skipped "systemd-analyze is not installed"
elif [ -z "$BIN" ]; then
    skipped "no built coordinator and worker to point ExecStart at (build first)"
else
    units=$OUT/systemd
    rm -rf "$units" && mkdir -p "$units"
    abs=$(cd "$BIN" && pwd)
    for f in deploy/systemd/*.service; do
        sed "s#/usr/local/bin/#$abs/#g" "$f" >"$units/$(basename "$f")"
    done
    # A template is verified through an instance of it.
    if systemd-analyze verify --man=no "$units/coordinator.service" "$units/worker@1.service" \
        >"$OUT/systemd.log" 2>&1 && [ ! -s "$OUT/systemd.log" ]; then
        ok "coordinator.service and worker@.service verify cleanly"
    else
        bad "systemd units:"; cat "$OUT/systemd.log"
    fi
    printf '[Service]\nExecStart=%s/coordinator --help\nRestartSecs=5\n' "$abs" >"$units/broken.service"
    if systemd-analyze verify --man=no "$units/broken.service" >"$OUT/broken-systemd.log" 2>&1 \
        && [ ! -s "$OUT/broken-systemd.log" ]; then
        bad "systemd-analyze accepted an unknown key"
    else
        ok "systemd-analyze flags a unit with an unknown key"
    fi
fi

if [ "$failed" = 1 ]; then
    echo "deploy validation: FAILED"
    exit 1
fi
echo "deploy validation: passed"
