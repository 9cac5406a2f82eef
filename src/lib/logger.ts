import pino from 'pino';

export function createLogger(level: string, name: string) {
  return pino({ level, name, base: { service: name } });
}
