#include "CShelfBuild.h"
