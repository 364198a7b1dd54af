/**
 * Work on a picture done once while the picture's Buffer lives: the judge asks for the same
 * screen's measurements several times in one judgement (each reading pass, each rule), and
 * each asking used to decode the PNG again. Held weakly, so the results go with the Buffer;
 * a failed result is not kept, so a later call tries again.
 */
export function oncePerBuffer<T>(compute: (picture: Buffer) => Promise<T>): (picture: Buffer) => Promise<T> {
  const results = new WeakMap<Buffer, Promise<T>>();
  return (picture) => {
    let result = results.get(picture);
    if (!result) {
      const computing = compute(picture);
      result = computing;
      results.set(picture, computing);
      computing.catch(() => {
        if (results.get(picture) === computing) results.delete(picture);
      });
    }
    return result;
  };
}
