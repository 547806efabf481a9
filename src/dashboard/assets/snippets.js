/**
 * "How to verify": receiver programs that work as pasted, one per language and library, filled in
 * with the environment's issuer and JWKS URL. The one source of them: the verify panel shows
 * these strings, and test/dashboard/verify-snippets.test.ts runs the Node and Python ones, as
 * shown, against a real delivery. Each listens on PORT (default 3000) and prints
 * `verified <type> <webhook-id>` for a delivery it accepted.
 *
 * (The programs' own imports use double quotes: the dashboard's structure test reads single-quoted
 * `from '…'` in this file as this module's imports.)
 *
 * Keyed by the webhook's format: a webhook in the Standard Webhooks format (`format:
 * 'standard-webhooks'`) is verified with its signing secret instead of the key set.
 */

/**
 * @typedef {object} Snippet
 * @property {string} id Stable: `node-receiver`, `node-kinde`, `python-pyjwt`, `go`, …
 * @property {string} label What the panel names it by.
 * @property {string} install The command that installs what it imports.
 * @property {string} code The program.
 */

/** @param {string} text A JSON string is a valid string literal in JavaScript, Python and Go alike (for URLs). */
const q = (text) => JSON.stringify(text);

/** @param {{ issuer: string, jwksUrl: string }} v @returns {Snippet[]} */
function jwtSnippets({ issuer, jwksUrl }) {
  return [
    {
      id: 'node-receiver',
      label: 'Node.js (identity-webhooks/receiver)',
      install: 'npm install identity-webhooks',
      code: `import http from "node:http";
import { createReceiver, createVerifier } from "identity-webhooks/receiver";

// Checks the RS256 signature with the keys at ${jwksUrl},
// the issuer, the timestamp, and answers a webhook-id seen before without running it again.
const receive = createReceiver({
  verifier: createVerifier({ issuer: ${q(issuer)} }),
  on: {
    'user.created': async (event, { webhookId }) => {
      console.log('verified', event.type, webhookId);
    },
  },
});

http
  .createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = req.method === 'POST' ? Buffer.concat(chunks) : undefined;
    const response = await receive(new Request(\`http://localhost\${req.url}\`, { method: req.method, headers: req.headers, body }));
    res.writeHead(response.status, { 'content-type': 'application/json' }).end(await response.text());
  })
  .listen(Number(process.env.PORT ?? 3000));
`,
    },
    {
      id: 'node-kinde',
      label: 'Node.js (@kinde/webhooks)',
      install: 'npm install @kinde/webhooks',
      code: `import http from "node:http";
import { decodeWebhook } from "@kinde/webhooks";

http
  .createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    // Verifies the signature with the keys at {issuer}/.well-known/jwks; null when it fails.
    const event = await decodeWebhook(body, ${q(issuer)});
    if (!event) return res.writeHead(400).end();
    // Deduplicate on webhook-id: the same delivery may come twice.
    console.log('verified', event.type, req.headers['webhook-id']);
    res.writeHead(200).end();
  })
  .listen(Number(process.env.PORT ?? 3000));
`,
    },
    {
      id: 'python-pyjwt',
      label: 'Python (PyJWT)',
      install: 'pip install "pyjwt[crypto]"',
      code: `import os
from http.server import BaseHTTPRequestHandler, HTTPServer

import jwt

ISSUER = ${q(issuer)}
KEYS = jwt.PyJWKClient(${q(jwksUrl)})


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        token = self.rfile.read(int(self.headers["content-length"])).decode()
        try:
            key = KEYS.get_signing_key_from_jwt(token)
            event = jwt.decode(token, key.key, algorithms=["RS256"], issuer=ISSUER)
        except jwt.PyJWTError:
            self.send_response(400)
            self.end_headers()
            return
        # Deduplicate on webhook-id: the same delivery may come twice.
        print("verified", event["type"], self.headers["webhook-id"], flush=True)
        self.send_response(200)
        self.end_headers()


HTTPServer(("", int(os.environ.get("PORT", "3000"))), Receiver).serve_forever()
`,
    },
    {
      id: 'go',
      label: 'Go (golang-jwt, keyfunc)',
      install: 'go get github.com/golang-jwt/jwt/v5 github.com/MicahParks/keyfunc/v3',
      code: `package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

const issuer = ${q(issuer)}

func main() {
	keys, err := keyfunc.NewDefault([]string{${q(jwksUrl)}})
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		token, err := jwt.Parse(string(body), keys.Keyfunc, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(issuer))
		if err != nil {
			http.Error(w, "invalid", http.StatusBadRequest)
			return
		}
		claims := token.Claims.(jwt.MapClaims)
		// Deduplicate on webhook-id: the same delivery may come twice.
		fmt.Println("verified", claims["type"], r.Header.Get("webhook-id"))
	})
	port := os.Getenv("PORT")
	if port == "" {
		port = "3000"
	}
	log.Fatal(http.ListenAndServe(":"+port, nil))
}
`,
    },
  ];
}

/** @returns {Snippet[]} */
function standardWebhooksSnippets() {
  return [
    {
      id: 'node-standardwebhooks',
      label: 'Node.js (standardwebhooks)',
      install: 'npm install standardwebhooks',
      code: `import http from "node:http";
import { Webhook } from "standardwebhooks";

// The webhook's signing secret (whsec_…), from its settings.
const webhook = new Webhook(process.env.WEBHOOK_SECRET);

http
  .createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    try {
      // Checks webhook-signature over webhook-id, webhook-timestamp and the body; throws when it fails.
      const event = webhook.verify(body, req.headers);
      console.log('verified', event.type, req.headers['webhook-id']);
      res.writeHead(200).end();
    } catch {
      res.writeHead(400).end();
    }
  })
  .listen(Number(process.env.PORT ?? 3000));
`,
    },
    {
      id: 'python-standardwebhooks',
      label: 'Python (standardwebhooks)',
      install: 'pip install standardwebhooks',
      code: `import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

# The webhook's signing secret (whsec_...), from its settings.
WEBHOOK = Webhook(os.environ["WEBHOOK_SECRET"])


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        try:
            event = WEBHOOK.verify(body, {k.lower(): v for k, v in self.headers.items()})
        except WebhookVerificationError:
            self.send_response(400)
            self.end_headers()
            return
        print("verified", event["type"], self.headers["webhook-id"], flush=True)
        self.send_response(200)
        self.end_headers()


HTTPServer(("", int(os.environ.get("PORT", "3000"))), Receiver).serve_forever()
`,
    },
  ];
}

/**
 * The snippets for a webhook: by its format (`standard-webhooks`, or the default signed JWT).
 *
 * @param {{ issuer: string, jwksUrl: string, format?: string | null }} options
 * @returns {Snippet[]}
 */
export function verifySnippets({ issuer, jwksUrl, format }) {
  return format === 'standard-webhooks' ? standardWebhooksSnippets() : jwtSnippets({ issuer, jwksUrl });
}
