/** One page of a list, and how many the whole list holds. */
export interface Page<T> {
  items: T[];
  total: number;
}
