/**
 * The page in French: every key of words.js's English tables (UI, ERROR_WORDS, DELIVERY_STATUS),
 * test/dashboard/words.test.ts checks. Loaded only for a French reader.
 */
const RELOAD = 'Cette page n’est plus à jour avec le serveur. Rechargez la page et réessayez.';
const UPDATE = 'Ce serveur ne propose pas encore cela. Demandez au service de se mettre à jour.';

export default {
  ui: {
    'status.enabled': 'Activé',
    'status.disabled': 'Désactivé',
    'status.failing': 'Activé, en échec depuis le {since}',
    'status.disabledFailing': 'Désactivé car en échec depuis le {since}',
    'status.disabledGone': 'Désactivé car le point de terminaison a répondu 410 Gone',
    'shell.loading': 'Chargement…',
    'shell.title': 'Webhooks',
    'shell.back': 'Retour à tous les webhooks',
    'shell.readOnly': 'Vous pouvez tout consulter, mais rien modifier ici.',
    'nav.all': 'Tous les webhooks',
    'nav.catalog': 'Catalogue des événements',
    'catalog.title': 'Catalogue des événements',
    'catalog.intro': 'Chaque événement qu’un webhook peut recevoir : ce qu’il signifie, le schéma JSON de ses données et un exemple.',
    'catalog.count': '{count} types d’événements',
    'catalog.filter': 'Filtrer les événements',
    'catalog.none': 'Aucun type d’événement ne correspond à « {query} ».',
    'catalog.origin': 'Défini par {origin}',
    'catalog.schema': 'Schéma JSON des données',
    'catalog.example': 'Exemple de données',
    'copy.button': 'Copier',
    'copy.done': 'Copié dans le presse-papiers.',
    'copy.failed': 'Copie impossible : sélectionnez le texte et copiez-le vous-même.',
    'dialog.catalogLink': 'Le contenu de chaque événement : le catalogue des événements',
    'verify.title': 'Comment vérifier',
    'verify.intro':
      'Le corps de chaque livraison est un JWT signé en RS256. Vérifiez sa signature avec les clés publiques de l’URL JWKS et son émetteur, puis dédupliquez sur l’en-tête webhook-id.',
    'verify.introStandard':
      'Ce webhook utilise le format Standard Webhooks : vérifiez l’en-tête webhook-signature avec le secret de signature du webhook, puis dédupliquez sur webhook-id.',
    'verify.jwks': 'URL JWKS',
    'verify.issuer': 'Émetteur',
    'verify.install': 'Installation : {command}',
    'verify.snippet': 'Exemple {label}',
  },
  errors: {
    INVALID_NAME: 'Saisissez un nom de 255 caractères au plus, sans saut de ligne.',
    INVALID_DESCRIPTION: 'La description peut compter jusqu’à 1000 caractères.',
    INVALID_ENDPOINT:
      'Saisissez l’adresse complète de votre point de terminaison, commençant par https://, comme https://example.com/webhooks.',
    ENDPOINT_NOT_ALLOWED:
      'Cette adresse se trouve sur un réseau privé ou réservé que les webhooks ne peuvent pas atteindre. Utilisez l’adresse publique de votre point de terminaison.',
    SECRETS_KEY_REQUIRED:
      'Cette option exige des secrets stockés chiffrés, et ce serveur n’a pas de clé pour les chiffrer. Demandez à son administrateur d’en définir une.',
    INVALID_HEADERS:
      'Vérifiez les en-têtes : 20 au plus, des noms faits de lettres, chiffres et tirets (ni Content-Type, Host, User-Agent ni webhook-…), des valeurs en texte simple sans saut de ligne.',
    INVALID_TIMEOUT_MS: 'Saisissez un délai de 1 à 30 secondes.',
    INVALID_RATE_LIMIT_PER_SECOND: 'Saisissez une limite de 1 à 1000 requêtes par seconde.',
    INVALID_SEARCH: 'Recherchez par identifiant d’événement (event_…) ou de livraison (msg_…).',
    INVALID_RANGE: 'Choisissez une période : 24h, 7d ou 30d.',
    INVALID_FORMAT: 'Choisissez la façon de signer les livraisons : JWT ou Standard Webhooks.',
    INVALID_AUTH: 'Vérifiez l’authentification du point de terminaison : chaque champ demandé, et un certificat avec sa propre clé privée.',
    INVALID_GRACE_MS: 'L’ancien secret peut continuer à signer 7 jours au plus.',
    INVALID_EVENT_TYPES: 'Choisissez au moins un événement (50 au plus).',
    UNKNOWN_EVENT_TYPE: 'Un des événements choisis n’est plus proposé. Retirez-le et réessayez.',
    WEBHOOK_LIMIT_REACHED:
      'Vous avez atteint le nombre de webhooks permis par votre offre. Supprimez-en un dont vous n’avez plus besoin, ou changez d’offre.',
    INVALID_SINCE: 'Saisissez une date et une heure.',
    INVALID_UNTIL: 'Saisissez une date et une heure.',
    INVALID_EVENT_TYPE: 'Cet événement n’est plus proposé. Rechargez la page et choisissez-en un autre.',
    INVALID_STATUS: 'Ce statut n’est plus proposé. Rechargez la page et choisissez-en un autre.',
    INVALID_PAGE_SIZE: RELOAD,
    INVALID_NEXT_TOKEN: 'Cette page du journal des livraisons n’est plus à jour. Actualisez le journal et réessayez.',
    INVALID_RESUME_HELD: RELOAD,
    INVALID_REQUEST: 'Une des valeurs a été refusée. Vérifiez-les et réessayez.',
    INVALID_JSON: RELOAD,
    INVALID_BODY: RELOAD,
    UNKNOWN_FIELD: RELOAD,
    UNKNOWN_PARAMETER: RELOAD,
    INVALID_HOST: RELOAD,
    INVALID_REQUEST_TARGET: RELOAD,
    UNSUPPORTED_MEDIA_TYPE: RELOAD,
    WEBHOOK_NOT_FOUND: 'Ce webhook n’existe plus. Il a peut-être été supprimé.',
    EVENT_NOT_FOUND: 'Cet événement n’est plus conservé. Les anciens événements sont supprimés au bout d’un certain temps.',
    DELIVERY_NOT_FOUND:
      'Cette livraison n’est plus conservée. Les anciennes livraisons sont supprimées au bout d’un certain temps. Actualisez le journal.',
    NOT_FOUND: 'Cela n’existe plus. Rechargez la page.',
    ASSET_NOT_FOUND: RELOAD,
    WEBHOOK_DISABLED: 'Ce webhook est désactivé. Activez-le d’abord, puis réessayez.',
    INVALID_CREDENTIALS: 'Vous n’êtes pas connecté, ou pas autorisé à gérer les webhooks ici. Reconnectez-vous et rechargez la page.',
    READ_ONLY_ACCESS:
      'Vous pouvez consulter mais rien modifier : ce lien donne un accès en lecture seule. Demandez un lien qui permet de gérer les webhooks.',
    CROSS_SITE_REQUEST: 'Cette modification a été refusée car elle ne venait pas de cette page. Rechargez la page et réessayez.',
    PAYLOAD_TOO_LARGE: 'Le texte est trop long. Raccourcissez la description et réessayez.',
    SERVICE_UNAVAILABLE: 'Le service redémarre. Réessayez dans un instant.',
    ROUTE_NOT_FOUND: UPDATE,
    METHOD_NOT_ALLOWED: UPDATE,
    INTERNAL_ERROR: 'Un problème est survenu de notre côté. Réessayez dans un instant.',
    NETWORK: 'Impossible de joindre le serveur. Vérifiez votre connexion et réessayez.',
  },
  statuses: {
    pending: 'En attente',
    held: 'Retenue (webhook désactivé)',
    delivered: 'Livrée',
    failed: 'Échouée',
  },
};
