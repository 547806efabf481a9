// identity-webhooks/email: needs @types/node only (nodemailer ships its own types; no @types/nodemailer).
import { renderDisabledEmail, type SmtpTransportOptions, smtpNotifier } from 'identity-webhooks/email';

const smtp: SmtpTransportOptions = { host: 'smtp.example.com', port: 587, auth: { user: 'hooks', pass: 'secret' } };
export const notifier = smtpNotifier({ url: smtp, from: 'Acme <hooks@acme.example>', to: () => 'owner@acme.example' });
export const render: typeof renderDisabledEmail = renderDisabledEmail;
