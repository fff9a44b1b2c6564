// Preloaded into every benchmark process: any connection to a host other than this machine
// ends the process (exit 99), so no framework can phone home (tracing, tokenizer downloads).
import dns from 'node:dns';
import net from 'node:net';

const local = new Set(['127.0.0.1', 'localhost', '::1', '::ffff:127.0.0.1']);
const refuse = (host) => {
  process.stderr.write(`network guard: refused a connection to ${host}\n`);
  process.exit(99);
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const host =
    typeof first === 'object' && first !== null
      ? first.path
        ? null
        : (first.host ?? 'localhost')
      : typeof args[1] === 'string'
        ? args[1]
        : typeof first === 'number'
          ? 'localhost'
          : null;
  if (host !== null && !local.has(host)) refuse(host);
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function guardedLookup(hostname, ...rest) {
  if (!local.has(hostname)) refuse(hostname);
  return lookup.call(this, hostname, ...rest);
};
const promisesLookup = dns.promises.lookup;
dns.promises.lookup = function guardedPromisesLookup(hostname, ...rest) {
  if (!local.has(hostname)) refuse(hostname);
  return promisesLookup.call(this, hostname, ...rest);
};
