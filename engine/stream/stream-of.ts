/** `items` as an async stream, the shape the providers take (one sentence, or a greeting's sentences). */
export async function* streamOf<T>(...items: T[]): AsyncIterable<T> {
  yield* items;
}
