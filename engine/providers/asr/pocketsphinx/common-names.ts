/**
 * Names the name grammar listens for beside the ones the call knows: common US first names
 * (Social Security records, both sexes) and surnames (the census's most frequent). A caller
 * with another name is heard by the general model (the grammar has no path for them), or, when
 * a listed name sounds close, confirmed back and corrected.
 */
export const COMMON_FIRST_NAMES = `
james robert john michael david william richard joseph thomas charles christopher daniel matthew anthony mark donald steven
paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey ryan jacob gary nicholas eric jonathan
stephen larry justin scott brandon benjamin samuel gregory alexander frank patrick raymond jack dennis jerry tyler aaron
jose adam nathan henry douglas zachary peter kyle noah ethan jeremy walter christian keith roger terry austin sean gerald
carl harold dylan arthur lawrence jordan jesse bryan billy bruce gabriel joe logan alan juan albert willie elijah wayne
randy vincent mason roy ralph bobby russell bradley philip eugene carlos luis
mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty sandra margaret ashley kimberly
emily donna michelle carol amanda melissa deborah stephanie dorothy rebecca sharon laura cynthia amy kathleen angela
shirley brenda emma anna pamela nicole samantha katherine christine helen debra rachel carolyn janet maria catherine
heather diane olivia julie joyce victoria ruth virginia lauren kelly christina joan evelyn judith andrea hannah megan
cheryl jacqueline martha madison teresa gloria sara janice ann kathryn abigail sophia frances jean alice judy isabella
julia grace amber denise danielle marilyn beverly charlotte natalie theresa diana brittany doris kayla alexis lori rose
`.trim().split(/\s+/);

export const COMMON_SURNAMES = `
smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson anderson thomas
taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis robinson walker young allen king
wright scott torres nguyen hill flores green adams nelson baker hall rivera campbell mitchell carter roberts gomez phillips
evans turner diaz parker cruz edwards collins reyes stewart morris morales murphy cook rogers gutierrez ortiz morgan
cooper peterson bailey reed kelly howard ramos kim cox ward richardson watson brooks chavez wood james bennett gray
mendoza ruiz hughes price alvarez castillo sanders patel myers long ross foster jimenez
`.trim().split(/\s+/);
