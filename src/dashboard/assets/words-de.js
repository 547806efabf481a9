/**
 * The page in German: every key of words.js's English tables (UI, ERROR_WORDS, DELIVERY_STATUS),
 * test/dashboard/words.test.ts checks. Loaded only for a German reader.
 */
const RELOAD = 'Diese Seite ist nicht mehr auf dem Stand des Servers. Laden Sie die Seite neu und versuchen Sie es erneut.';
const UPDATE = 'Dieser Server bietet das noch nicht an. Bitten Sie den Dienst um ein Update.';

export default {
  ui: {
    'status.enabled': 'Aktiviert',
    'status.disabled': 'Deaktiviert',
    'status.failing': 'Aktiviert, schlägt fehl seit {since}',
    'status.disabledFailing': 'Deaktiviert, da fehlerhaft seit {since}',
    'status.disabledGone': 'Deaktiviert, da der Endpunkt mit 410 Gone geantwortet hat',
    'shell.loading': 'Wird geladen…',
    'shell.title': 'Webhooks',
    'shell.back': 'Zurück zu allen Webhooks',
    'shell.readOnly': 'Sie können hier alles ansehen, aber nichts ändern.',
    'nav.all': 'Alle Webhooks',
    'nav.catalog': 'Ereigniskatalog',
    'catalog.title': 'Ereigniskatalog',
    'catalog.intro': 'Jedes Ereignis, das ein Webhook empfangen kann: was es bedeutet, das JSON-Schema seiner Daten und ein Beispiel.',
    'catalog.count': '{count} Ereignistypen',
    'catalog.filter': 'Ereignisse filtern',
    'catalog.none': 'Kein Ereignistyp passt zu „{query}“.',
    'catalog.origin': 'Definiert von {origin}',
    'catalog.schema': 'JSON-Schema der Daten',
    'catalog.example': 'Beispieldaten',
    'copy.button': 'Kopieren',
    'copy.done': 'In die Zwischenablage kopiert.',
    'copy.failed': 'Kopieren nicht möglich: Markieren Sie den Text und kopieren Sie ihn selbst.',
    'dialog.catalogLink': 'Was jedes Ereignis enthält: der Ereigniskatalog',
    'verify.title': 'So prüfen Sie',
    'verify.intro':
      'Der Body jeder Zustellung ist ein mit RS256 signiertes JWT. Prüfen Sie die Signatur mit den öffentlichen Schlüsseln unter der JWKS-URL und den Aussteller, und deduplizieren Sie anhand des Headers webhook-id.',
    'verify.introStandard':
      'Dieser Webhook nutzt das Format Standard Webhooks: Prüfen Sie den Header webhook-signature mit dem Signaturgeheimnis des Webhooks, und deduplizieren Sie anhand von webhook-id.',
    'verify.jwks': 'JWKS-URL',
    'verify.issuer': 'Aussteller',
    'verify.install': 'Installation: {command}',
    'verify.snippet': 'Beispiel {label}',
  },
  errors: {
    INVALID_NAME: 'Geben Sie einen Namen mit höchstens 255 Zeichen ohne Zeilenumbruch ein.',
    INVALID_DESCRIPTION: 'Die Beschreibung darf bis zu 1000 Zeichen lang sein.',
    INVALID_ENDPOINT: 'Geben Sie die vollständige Adresse Ihres Endpunkts ein, beginnend mit https://, etwa https://example.com/webhooks.',
    ENDPOINT_NOT_ALLOWED:
      'Diese Adresse liegt in einem privaten oder reservierten Netz, das Webhooks nicht erreichen dürfen. Verwenden Sie die öffentliche Adresse Ihres Endpunkts.',
    SECRETS_KEY_REQUIRED:
      'Diese Option erfordert verschlüsselt gespeicherte Geheimnisse, und dieser Server hat keinen Schlüssel dafür. Bitten Sie den Administrator, einen festzulegen.',
    INVALID_HEADERS:
      'Prüfen Sie die Header: höchstens 20, Namen aus Buchstaben, Ziffern und Bindestrichen (nicht Content-Type, Host, User-Agent oder webhook-…), Werte als einfacher Text ohne Zeilenumbruch.',
    INVALID_TIMEOUT_MS: 'Geben Sie ein Zeitlimit von 1 bis 30 Sekunden ein.',
    INVALID_RATE_LIMIT_PER_SECOND: 'Geben Sie ein Limit von 1 bis 1000 Anfragen pro Sekunde ein.',
    INVALID_SEARCH: 'Suchen Sie nach einer Ereignis-ID (event_…) oder Zustellungs-ID (msg_…).',
    INVALID_RANGE: 'Wählen Sie einen Zeitraum: 24h, 7d oder 30d.',
    INVALID_FORMAT: 'Wählen Sie, wie Zustellungen signiert werden: JWT oder Standard Webhooks.',
    INVALID_AUTH:
      'Prüfen Sie die Endpunkt-Authentifizierung: jedes verlangte Feld und ein Zertifikat mit seinem eigenen privaten Schlüssel.',
    INVALID_GRACE_MS: 'Das alte Geheimnis kann höchstens 7 Tage weiter signieren.',
    INVALID_EVENT_TYPES: 'Wählen Sie mindestens ein Ereignis (höchstens 50).',
    UNKNOWN_EVENT_TYPE: 'Eines der gewählten Ereignisse wird nicht mehr angeboten. Entfernen Sie es und versuchen Sie es erneut.',
    WEBHOOK_LIMIT_REACHED:
      'Sie haben die Anzahl an Webhooks erreicht, die Ihr Tarif erlaubt. Löschen Sie einen, den Sie nicht mehr brauchen, oder wechseln Sie den Tarif.',
    INVALID_SINCE: 'Geben Sie Datum und Uhrzeit ein.',
    INVALID_UNTIL: 'Geben Sie Datum und Uhrzeit ein.',
    INVALID_EVENT_TYPE: 'Dieses Ereignis wird nicht mehr angeboten. Laden Sie die Seite neu und wählen Sie ein anderes.',
    INVALID_STATUS: 'Dieser Status wird nicht mehr angeboten. Laden Sie die Seite neu und wählen Sie einen anderen.',
    INVALID_PAGE_SIZE: RELOAD,
    INVALID_NEXT_TOKEN: 'Diese Seite des Zustellprotokolls ist veraltet. Aktualisieren Sie das Protokoll und versuchen Sie es erneut.',
    INVALID_RESUME_HELD: RELOAD,
    INVALID_REQUEST: 'Einer der Werte wurde abgelehnt. Prüfen Sie die Werte und versuchen Sie es erneut.',
    INVALID_JSON: RELOAD,
    INVALID_BODY: RELOAD,
    UNKNOWN_FIELD: RELOAD,
    UNKNOWN_PARAMETER: RELOAD,
    INVALID_HOST: RELOAD,
    INVALID_REQUEST_TARGET: RELOAD,
    UNSUPPORTED_MEDIA_TYPE: RELOAD,
    WEBHOOK_NOT_FOUND: 'Dieser Webhook existiert nicht mehr. Vielleicht wurde er gelöscht.',
    EVENT_NOT_FOUND: 'Dieses Ereignis wird nicht mehr aufbewahrt. Alte Ereignisse werden nach einer Weile entfernt.',
    DELIVERY_NOT_FOUND:
      'Diese Zustellung wird nicht mehr aufbewahrt. Alte Zustellungen werden nach einer Weile entfernt. Aktualisieren Sie das Protokoll.',
    NOT_FOUND: 'Das existiert nicht mehr. Laden Sie die Seite neu.',
    ASSET_NOT_FOUND: RELOAD,
    WEBHOOK_DISABLED: 'Dieser Webhook ist deaktiviert. Aktivieren Sie ihn zuerst und versuchen Sie es dann erneut.',
    INVALID_CREDENTIALS:
      'Sie sind nicht angemeldet oder dürfen hier keine Webhooks verwalten. Melden Sie sich erneut an und laden Sie die Seite neu.',
    READ_ONLY_ACCESS:
      'Sie können hier nur ansehen, nichts ändern: Dieser Link gewährt Lesezugriff. Fordern Sie einen Link an, mit dem Sie Webhooks verwalten können.',
    CROSS_SITE_REQUEST:
      'Diese Änderung wurde abgelehnt, weil sie nicht von dieser Seite kam. Laden Sie die Seite neu und versuchen Sie es erneut.',
    PAYLOAD_TOO_LARGE: 'Das ist zu viel Text. Kürzen Sie die Beschreibung und versuchen Sie es erneut.',
    SERVICE_UNAVAILABLE: 'Der Dienst startet neu. Versuchen Sie es gleich noch einmal.',
    ROUTE_NOT_FOUND: UPDATE,
    METHOD_NOT_ALLOWED: UPDATE,
    INTERNAL_ERROR: 'Bei uns ist etwas schiefgegangen. Versuchen Sie es gleich noch einmal.',
    NETWORK: 'Der Server ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  },
  statuses: {
    pending: 'Ausstehend',
    held: 'Zurückgehalten (Webhook deaktiviert)',
    delivered: 'Zugestellt',
    failed: 'Fehlgeschlagen',
  },
};
