/**
 * Start-up could not complete for a reason the operator can fix: a port already taken, a
 * setting that does not work on this machine. The message is one line saying what failed,
 * which setting is involved and how to fix it; `parley serve` prints it and exits.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** The one-line reason a socket could not be bound, from its error code. */
export function bindFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") return "the port is already in use (another Parley, or another program)";
  if (code === "EACCES") return "permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)";
  if (code === "EADDRNOTAVAIL") return "the address is not one of this machine's";
  return (err as Error).message;
}
