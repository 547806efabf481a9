// identity-webhooks/receiver: needs @types/node only, for Request and Response (a browser or edge
// project gets them from lib "dom" instead).
import { createReceiver, createVerifier } from 'identity-webhooks/receiver';

export const receive: (request: Request) => Promise<Response> = createReceiver({
  verifier: createVerifier({ issuer: 'https://auth.example.com/auth' }),
  on: {
    'user.created': async (event) => {
      const email: string | null = event.data.user.email;
      void email;
    },
  },
});
