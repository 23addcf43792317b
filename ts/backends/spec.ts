/**
 * A backend named in one string, as a command line takes it (`acp-terminal mcp --backend SPEC`):
 * `podman:NAME`, `docker:NAME`, `ssh:DEST` and `kubectl:POD[/CONTAINER][@NAMESPACE]`.
 *
 * Invariant: a spec is read strictly: an unknown kind, an empty name, or a name that the transport
 * would read as an option (`-…`) or that is not a valid name of its kind is `ERR_INVALID_ARG`, never a
 * guess. The names reach the transport as argv words (ssh's destination too), never through a shell.
 */

import { AcpTerminalError } from '../errors';
import { docker, kubectl, podman, ssh, type Backend, type BackendOptions } from './index';

/** Container names as podman and docker accept them. */
const CONTAINER = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** A Kubernetes object name (RFC 1123 subdomain; container names are labels, a subset). */
const K8S_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
/** `[user@]host`: a host name or IPv4 address, or an ssh config alias; no option, no space. */
const SSH_DEST = /^(?:[A-Za-z0-9._][A-Za-z0-9._-]*@)?[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/** The kinds a spec may name, for messages. */
export const BACKEND_SPEC_FORMS = 'podman:NAME, docker:NAME, ssh:[USER@]HOST, kubectl:POD[/CONTAINER][@NAMESPACE]';

function bad(spec: string, why: string): AcpTerminalError {
  return new AcpTerminalError('ERR_INVALID_ARG', `${JSON.stringify(spec)}: ${why} (expected ${BACKEND_SPEC_FORMS})`, { spec });
}

/** The backend `spec` names; throws `ERR_INVALID_ARG` saying what is wrong with it. */
export function backendFromSpec(spec: string, options: BackendOptions = {}): Backend {
  const colon = spec.indexOf(':');
  if (colon <= 0) throw bad(spec, 'no kind');
  const kind = spec.slice(0, colon);
  const rest = spec.slice(colon + 1);
  switch (kind) {
    case 'podman':
    case 'docker':
      if (!CONTAINER.test(rest)) throw bad(spec, `${JSON.stringify(rest)} is not a container name`);
      return kind === 'podman' ? podman(rest, options) : docker(rest, options);
    case 'ssh':
      if (!SSH_DEST.test(rest)) throw bad(spec, `${JSON.stringify(rest)} is not an ssh destination`);
      return ssh(rest, options);
    case 'kubectl': {
      const m = /^([^/@]*)(?:\/([^/@]*))?(?:@([^/@]*))?$/.exec(rest);
      if (!m) throw bad(spec, `${JSON.stringify(rest)} is not POD[/CONTAINER][@NAMESPACE]`);
      const [pod, container, namespace] = [m[1]!, m[2], m[3]];
      for (const [what, name] of [
        ['pod', pod],
        ['container', container],
        ['namespace', namespace],
      ] as const) {
        if (name !== undefined && !K8S_NAME.test(name)) throw bad(spec, `${JSON.stringify(name)} is not a ${what} name`);
      }
      return kubectl(pod, { ...options, ...(container !== undefined ? { container } : {}), ...(namespace !== undefined ? { namespace } : {}) });
    }
    default:
      throw bad(spec, `unknown kind ${JSON.stringify(kind)}`);
  }
}
