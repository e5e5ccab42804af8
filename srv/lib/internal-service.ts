import cds from '@sap/cds'

/**
 * An owner's internal service (served over no protocol): other services read its projections and
 * call its actions in their own context. Its reads are whole: CAP pages the reads of an
 * application service made within an HTTP request (and then orders them by key), which would cut
 * a caller's read short and add a sort it did not ask for.
 */
export class InternalService extends cds.ApplicationService {
  /** Leaves a read as asked: set before init, it takes the place of CAP's generic paging handler. */
  handle_paging = () => {}
}
