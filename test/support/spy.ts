/** How many times `object[method]` was called while `fn` ran (the method itself still runs). */
export async function callsDuring<T extends object>(object: T, method: keyof T & string, fn: () => Promise<unknown>): Promise<number> {
  // jest.spyOn's key type wants a function-valued key of a concrete type; the caller names one.
  const spy = jest.spyOn(object as Record<string, (...args: unknown[]) => unknown>, method);
  try {
    await fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}
