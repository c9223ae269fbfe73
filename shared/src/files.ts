import { z } from 'zod';

/*
 * Private uploads (identity documents now, chat attachments next): the rules both the core
 * and the upload island apply. The core decides by the bytes; the browser only warns early.
 */

/** Per file, enforced while reading: the 10 MB + 1st byte ends the request with 413. */
export const FILE_MAX_BYTES = 10 * 1024 * 1024;
/** Per request: the 7th file ends the request with 413. */
export const FILES_MAX_PER_REQUEST = 6;
/** A whole multipart upload: every file at its cap plus generous room for part headers and fields (core and BFF). */
export const UPLOAD_BODY_MAX_BYTES = FILES_MAX_PER_REQUEST * FILE_MAX_BYTES + 256 * 1024;

/** A byte cap as the whole megabytes a refusal names ({{mb}}): the request cap reads "60 MB". */
export function wholeMegabytes(bytes: number): number {
  return Math.floor(bytes / 1024 / 1024);
}

/**
 * What an upload may be, by its sniffed bytes. HEIC is refused: the prebuilt image library has
 * no HEVC decoder, so a HEIC photo could not be re-encoded and would keep its EXIF/GPS data.
 * iPhones send JPEG when the file input does not list HEIC (the island's accept list).
 */
export const ACCEPTED_FILE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'application/pdf'] as const;
export type TAcceptedFileType = (typeof ACCEPTED_FILE_TYPES)[number];

/**
 * The answer of a stored file's download (identity documents, chat files), as the route schemas
 * and the API document declare it: the bytes, typed as what the upload was accepted as.
 */
export const STORED_FILE_RESPONSE = {
  description: 'The file: an image (re-encoded, inline) or a PDF (as an attachment)',
  content: Object.fromEntries(ACCEPTED_FILE_TYPES.map((type) => [type, { schema: z.string().meta({ contentMediaType: type }) }])),
};

/** The `accept` attribute of file inputs. */
export const FILE_INPUT_ACCEPT = '.jpg,.jpeg,.png,.webp,.pdf,image/jpeg,image/png,image/webp,application/pdf';
