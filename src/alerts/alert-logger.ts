/** The slice of a pino logger the alerts feature writes to (Fastify's and pino's loggers fit). */
export interface AlertLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentAlertLogger: AlertLogger = { info() {}, warn() {}, error() {} };
