/** Thrown for a document whose text cannot be read (a broken PDF, no text at all, too many pages); its message is safe to show the API client. */
export class DocumentTextError extends Error {
  override readonly name = "DocumentTextError";
}
