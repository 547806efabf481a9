/** What every part of the store contract answers: which of its errors a transient retry can cure. */
export interface StoreErrors {
  /**
   * True for an error a transient retry can cure: a lost or refused connection, a busy lock, a
   * serialisation conflict. Only the adapter knows its driver's codes; the engine asks here.
   */
  isTransient(error: unknown): boolean;
}
