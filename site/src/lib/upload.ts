import { ZApiError } from '@obmen/shared/envelope';
import { buildPath, checkAnswer, type TAnswer, type TAnyCall, type TPathParams } from '@obmen/shared/calls';
import { ApiError } from './api.ts';
import { VALIDATE_ANSWERS } from './answer-checks.ts';
import { applyEnvelope } from './envelope.ts';
import { clientMessage } from './client-i18n.ts';

/**
 * A multipart POST to /api with upload progress (fetch() reports none). Same contract as api():
 * the envelope is applied, and a failure becomes an ApiError with a localized message.
 */
export function uploadForm<C extends TAnyCall>(
  call: C,
  params: TPathParams<C['path']>,
  form: FormData,
  onProgress: (fraction: number) => void,
): Promise<TAnswer<C>> {
  return new Promise<TAnswer<C>>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(call.method, buildPath(call, { params }));
    xhr.setRequestHeader('accept', 'application/json');
    xhr.responseType = 'json';
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', clientMessage('error.network')));
    xhr.onload = () => {
      const data: unknown = xhr.response;
      if (data && typeof data === 'object') applyEnvelope(data);
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          checkAnswer(call, data, VALIDATE_ANSWERS);
        } catch (mismatch) {
          return reject(mismatch);
        }
        return resolve(data);
      }
      const error = ZApiError.safeParse(data);
      reject(
        error.success
          ? new ApiError(xhr.status, error.data.code, error.data.message, error.data.fields ?? {}, data)
          : new ApiError(xhr.status, 'http', clientMessage('error.generic')),
      );
    };
    xhr.send(form);
  });
}
