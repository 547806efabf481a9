import { createRequire } from 'node:module';
import type nodemailerModule from 'nodemailer';
import type addressparserFunction from 'nodemailer/lib/addressparser';

const require = createRequire(import.meta.url);

/**
 * nodemailer, loaded when `smtpNotifier` first needs it rather than when `identity-webhooks/email`
 * is imported: it is an optional peer dependency, so a host that never sends email never installs
 * it, and one that does gets an error naming the package instead of a bare "cannot find module".
 */
function load<T>(specifier: string): T {
  try {
    return require(specifier) as T;
  } catch (error) {
    if ((error as { code?: unknown })?.code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes("'nodemailer")) {
      throw new Error('smtpNotifier needs the "nodemailer" package, which is not installed: run `npm install nodemailer`', {
        cause: error,
      });
    }
    throw error;
  }
}

export const loadNodemailer = (): typeof nodemailerModule => load('nodemailer');
export const loadAddressparser = (): typeof addressparserFunction => load('nodemailer/lib/addressparser');
