import type { ReactNode, RefObject } from 'react';
import type { TCurrencyInfo } from '@obmen/shared';
import { AmountInput } from './FormParts.tsx';

type TAmountBoxProps = {
  side: 'pay' | 'receive';
  label: string;
  /** Beside the label: the wallet's balance. */
  head: ReactNode;
  inputRef: RefObject<HTMLInputElement | null>;
  placeholder: string;
  value: string;
  onType: (value: string) => void;
  error: string | undefined;
  currencyLabel: string;
  currency: string;
  currencies: TCurrencyInfo[];
  onCurrency: (code: string) => void;
};

const BOX = {
  pay: { id: 'xf-pay', name: 'amount', input: 'exchange-amount', select: 'exchange-src' },
  receive: { id: 'xf-receive', name: 'amount_receive', input: 'exchange-amount-receive', select: 'exchange-dst' },
} as const;

/** One side of the pair form: its amount, its currency, its error. */
export function AmountBox({
  side,
  label,
  head,
  inputRef,
  placeholder,
  value,
  onType,
  error,
  currencyLabel,
  currency,
  currencies,
  onCurrency,
}: TAmountBoxProps) {
  const box = BOX[side];
  return (
    <div className="xf-box">
      <div className="xf-row-head">
        <label htmlFor={box.id}>{label}</label>
        {head}
      </div>
      <div className={`xf-input${error ? ' xf-invalid' : ''}`}>
        <AmountInput
          id={box.id}
          ref={inputRef}
          name={box.name}
          placeholder={placeholder}
          value={value}
          onValue={onType}
          error={error}
          aria-describedby={error ? `${box.id}-error` : undefined}
          data-testid={box.input}
        />
        <select aria-label={currencyLabel} value={currency} onChange={(event) => onCurrency(event.target.value)} data-testid={box.select}>
          {currencies.map((c) => (
            <option key={c.code} value={c.code}>
              {c.code}
            </option>
          ))}
        </select>
      </div>
      {error && (
        <p className="field-error" id={`${box.id}-error`} role="alert" data-testid={`error-${box.name}`}>
          {error}
        </p>
      )}
    </div>
  );
}
