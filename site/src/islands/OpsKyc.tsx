import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { KycQueue } from './ops/KycQueue.tsx';
import { KycReview } from './ops/KycReview.tsx';

/*
 * Identity review in the back office (/ops/kyc and /ops/kyc/{id}). Every call goes to /api/ops
 * with the operator's own cookie; what the operator may see, the core decides per call.
 */

type TProps = TIslandProps & ({ mode: 'queue' } | { mode: 'review'; id: string });

export default function OpsKyc(props: TProps) {
  const { locale, messages, timeZone } = props;
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      {props.mode === 'queue' ? <KycQueue /> : <KycReview id={props.id} />}
    </IslandRoot>
  );
}
