// Creates the PostgreSQL store as the README does and prints what happened: a store when pg is
// installed beside the package (it connects only when used), the error naming pg when it is not.
// Importing identity-webhooks/postgres must work either way: pg is loaded on first use.
const { postgresStore } = await import('identity-webhooks/postgres');
try {
  const store = postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await store.close();
  console.log(JSON.stringify({ created: true }));
} catch (error) {
  console.log(JSON.stringify({ created: false, message: error.message }));
}
